import { Migration } from '@mikro-orm/migrations';

export class Migration20261128064310_a2a_task_agent_index extends Migration {

  override name = 'Migration20261128064310_a2a_task_agent_index';

  override up(): void | Promise<void> {
    this.addSql(`drop index "a2a_tasks_agent_id_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index "a2a_tasks_agent_id_index" on "a2a_tasks" ("agent_id");`);
  }

}
