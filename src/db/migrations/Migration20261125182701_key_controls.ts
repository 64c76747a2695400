import { Migration } from '@mikro-orm/migrations';

export class Migration20261125182701_key_controls extends Migration {

  override name = 'Migration20261125182701_key_controls';

  override up(): void | Promise<void> {
    this.addSql(`create table "api_key_spend" ("api_key_id" varchar(255) not null, "period_start" timestamptz not null, "spent_micros" bigint not null default '0', primary key ("api_key_id", "period_start"));`);

    this.addSql(`alter table "agents" add "fallback_models" jsonb null;`);

    this.addSql(`alter table "api_keys" add "expires_at" timestamptz null, add "spend_limit_micros" bigint null, add "spend_limit_period" varchar(10) null;`);

    this.addSql(`alter table "api_key_spend" add constraint "api_key_spend_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "api_key_spend" cascade;`);

    this.addSql(`alter table "agents" drop column "fallback_models";`);

    this.addSql(`alter table "api_keys" drop column "expires_at", drop column "spend_limit_micros", drop column "spend_limit_period";`);
  }

}
