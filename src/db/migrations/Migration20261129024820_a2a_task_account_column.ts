import { Migration } from '@mikro-orm/migrations';

export class Migration20261129024820_a2a_task_account_column extends Migration {

  override name = 'Migration20261129024820_a2a_task_account_column';

  override up(): void | Promise<void> {
    this.addSql(`alter table "a2a_tasks" drop constraint "a2a_tasks_account_id_foreign";`);

    this.addSql(`drop index "a2a_tasks_account_id_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "a2a_tasks" add constraint "a2a_tasks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`create index "a2a_tasks_account_id_index" on "a2a_tasks" ("account_id");`);
  }

}
