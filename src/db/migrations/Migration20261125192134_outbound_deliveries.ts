import { Migration } from '@mikro-orm/migrations';

export class Migration20261125192134_outbound_deliveries extends Migration {

  override name = 'Migration20261125192134_outbound_deliveries';

  override up(): void | Promise<void> {
    this.addSql(`create table "deliveries" ("id" varchar(255) not null, "account_id" varchar(255) not null, "job_id" varchar(255) null, "trigger_id" varchar(255) null, "kind" text not null, "webhook_id" varchar(100) not null, "body" text null, "target" varchar(255) null, "event" varchar(40) null, "status" text not null default 'pending', "created_at" timestamptz not null default now(), "finished_at" timestamptz null, "dispatched_at" timestamptz null, "dispatch_lease_until" timestamptz null, "trace_context" varchar(64) null, primary key ("id"));`);
    this.addSql(`create index "deliveries_job_id_index" on "deliveries" ("job_id");`);
    this.addSql(`create index "deliveries_undispatched_idx" on "deliveries" ("created_at") where "dispatched_at" is null;`);

    this.addSql(`create table "delivery_attempts" ("delivery_id" varchar(255) not null, "attempt" int not null, "at" timestamptz not null, "url" text not null, "status_code" int null, "duration_ms" int not null, "error" text null, "response_bytes" int not null default 0, "response_excerpt" text null, primary key ("delivery_id", "attempt"));`);

    this.addSql(`create table "trigger_callback_secrets" ("id" varchar(255) not null, "trigger_id" varchar(255) not null, "sealed_secret" text not null, "expires_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "trigger_callback_secrets_trigger_id_expires_at_index" on "trigger_callback_secrets" ("trigger_id", "expires_at");`);

    this.addSql(`alter table "triggers" add "callback_url" text null;`);

    this.addSql(`alter table "deliveries" add constraint "deliveries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_trigger_id_foreign" foreign key ("trigger_id") references "triggers" ("id") on delete cascade;`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_kind_check" check ("kind" in ('job_callback', 'test_callback', 'a2a_push'));`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_status_check" check ("status" in ('pending', 'delivered', 'failed'));`);

    this.addSql(`alter table "delivery_attempts" add constraint "delivery_attempts_delivery_id_foreign" foreign key ("delivery_id") references "deliveries" ("id") on delete cascade;`);

    this.addSql(`alter table "trigger_callback_secrets" add constraint "trigger_callback_secrets_trigger_id_foreign" foreign key ("trigger_id") references "triggers" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "delivery_attempts" drop constraint "delivery_attempts_delivery_id_foreign";`);

    this.addSql(`drop table if exists "deliveries" cascade;`);
    this.addSql(`drop table if exists "delivery_attempts" cascade;`);
    this.addSql(`drop table if exists "trigger_callback_secrets" cascade;`);

    this.addSql(`alter table "triggers" drop column "callback_url";`);
  }

}
