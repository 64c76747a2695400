import { Migration } from '@mikro-orm/migrations';

export class Migration20261127085155_a2a_client_ids extends Migration {

  override name = 'Migration20261127085155_a2a_client_ids';

  override up(): void | Promise<void> {
    this.addSql(`create table "a2a_contexts" ("agent_id" varchar(255) not null, "context_id" varchar(255) not null, "account_id" varchar(255) not null, "thread_id" varchar(255) not null, "created_at" timestamptz not null default now(), primary key ("agent_id", "context_id"));`);
    this.addSql(`create index "a2a_contexts_account_id_index" on "a2a_contexts" ("account_id");`);
    this.addSql(`alter table "a2a_contexts" add constraint "a2a_contexts_thread_id_unique" unique ("thread_id");`);

    this.addSql(`alter table "a2a_push_configs" add "client_id" varchar(255) null;`);
    this.addSql(`alter table "a2a_push_configs" add constraint "a2a_push_configs_task_client_id_unique" unique ("task_id", "client_id");`);

    this.addSql(`alter table "a2a_contexts" add constraint "a2a_contexts_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "a2a_contexts" add constraint "a2a_contexts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "a2a_contexts" add constraint "a2a_contexts_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "a2a_contexts" cascade;`);

    this.addSql(`alter table "a2a_push_configs" drop constraint "a2a_push_configs_task_client_id_unique";`);
    this.addSql(`alter table "a2a_push_configs" drop column "client_id";`);
  }

}
