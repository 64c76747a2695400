import { Migration } from '@mikro-orm/migrations';

export class Migration20261126005504_a2a_task_followed extends Migration {

  override name = 'Migration20261126005504_a2a_task_followed';

  override up(): void | Promise<void> {
    this.addSql(`alter table "a2a_tasks" add "followed" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "a2a_tasks" drop column "followed";`);
  }

}
