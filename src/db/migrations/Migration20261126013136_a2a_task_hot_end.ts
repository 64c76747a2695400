import { Migration } from '@mikro-orm/migrations';

export class Migration20261126013136_a2a_task_hot_end extends Migration {

  override name = 'Migration20261126013136_a2a_task_hot_end';

  override up(): void | Promise<void> {
    this.addSql(`drop index "a2a_tasks_agent_updated_idx";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index "a2a_tasks_agent_updated_idx" on "a2a_tasks" ("agent_id", "updated_at", "id");`);
  }

}
