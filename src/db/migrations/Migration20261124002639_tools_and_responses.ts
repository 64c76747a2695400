import { Migration } from '@mikro-orm/migrations';

export class Migration20261124002639_tools_and_responses extends Migration {

  override name = 'Migration20261124002639_tools_and_responses';

  override up(): void | Promise<void> {
    this.addSql(`create table "responses" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "thread_id" varchar(255) not null, "body" jsonb not null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "responses_account_id_index" on "responses" ("account_id");`);

    this.addSql(`alter table "messages" add "data" jsonb null;`);

    this.addSql(`alter table "responses" add constraint "responses_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "responses" add constraint "responses_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "responses" add constraint "responses_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "responses" cascade;`);

    this.addSql(`alter table "messages" drop column "data";`);
  }

}
