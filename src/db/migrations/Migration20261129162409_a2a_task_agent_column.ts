import { Migration } from '@mikro-orm/migrations';

export class Migration20261129162409_a2a_task_agent_column extends Migration {

  override name = 'Migration20261129162409_a2a_task_agent_column';

  override up(): void | Promise<void> {
    this.addSql(`alter table "a2a_tasks" drop constraint "a2a_tasks_agent_id_foreign";`);

    this.addSql(`create or replace function "agents_delete_a2a_tasks_fn"() returns trigger as \$\$ begin delete from a2a_tasks where agent_id = old.id; return null; end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "delete_a2a_tasks" AFTER DELETE on "agents" for each ROW execute function "agents_delete_a2a_tasks_fn"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "a2a_tasks" t where not exists (select 1 from "agents" a where a."id" = t."agent_id");`);
    this.addSql(`alter table "a2a_tasks" add constraint "a2a_tasks_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`drop trigger if exists "delete_a2a_tasks" on "agents";`);
    this.addSql(`drop function if exists "agents_delete_a2a_tasks_fn"();`);
  }

}
