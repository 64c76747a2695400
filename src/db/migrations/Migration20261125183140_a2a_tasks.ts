import { Migration } from '@mikro-orm/migrations';

export class Migration20261125183140_a2a_tasks extends Migration {

  override name = 'Migration20261125183140_a2a_tasks';

  override up(): void | Promise<void> {
    this.addSql(`create table "a2a_tasks" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "context_id" varchar(255) not null, "kind" varchar(10) not null, "state" varchar(20) null, "request" jsonb not null, "answer" text null, "error" text null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "a2a_tasks_account_id_index" on "a2a_tasks" ("account_id");`);
    this.addSql(`create index "a2a_tasks_agent_id_index" on "a2a_tasks" ("agent_id");`);
    this.addSql(`create index "a2a_tasks_agent_updated_idx" on "a2a_tasks" ("agent_id", "updated_at", "id");`);

    this.addSql(`create table "a2a_push_configs" ("id" varchar(255) not null, "task_id" varchar(255) not null, "url" text not null, "token" text null, "authentication" jsonb null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "a2a_push_configs_task_id_index" on "a2a_push_configs" ("task_id");`);

    this.addSql(`alter table "a2a_tasks" add constraint "a2a_tasks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "a2a_tasks" add constraint "a2a_tasks_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "a2a_push_configs" add constraint "a2a_push_configs_task_id_foreign" foreign key ("task_id") references "a2a_tasks" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "a2a_push_configs" drop constraint "a2a_push_configs_task_id_foreign";`);

    this.addSql(`drop table if exists "a2a_tasks" cascade;`);
    this.addSql(`drop table if exists "a2a_push_configs" cascade;`);
  }

}
