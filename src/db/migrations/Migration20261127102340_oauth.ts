import { Migration } from '@mikro-orm/migrations';

export class Migration20261127102340_oauth extends Migration {

  override name = 'Migration20261127102340_oauth';

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth_models" ("kind" varchar(40) not null, "id" varchar(255) not null, "payload" jsonb not null, "grant_id" varchar(100) null, "uid" varchar(100) null, "expires_at" timestamptz null, "consumed_at" timestamptz null, primary key ("kind", "id"));`);
    this.addSql(`create index "oauth_models_grant_id_index" on "oauth_models" ("grant_id");`);
    this.addSql(`create index "oauth_models_uid_index" on "oauth_models" ("uid");`);
    this.addSql(`create index "oauth_models_expires_at_index" on "oauth_models" ("expires_at");`);

    this.addSql(`alter table "api_keys" add "kind" varchar(10) not null default 'SECRET', add "client_name" varchar(200) null, add "client_id" text null, add "grant_id" varchar(100) null;`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_grant_id_unique" unique ("grant_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_models" cascade;`);

    this.addSql(`alter table "api_keys" drop constraint "api_keys_grant_id_unique";`);
    this.addSql(`alter table "api_keys" drop column "kind", drop column "client_name", drop column "client_id", drop column "grant_id";`);
  }

}
