import { Migration } from '@mikro-orm/migrations';

export class Migration20261127102621_input_requests extends Migration {

  override name = 'Migration20261127102621_input_requests';

  override up(): void | Promise<void> {
    this.addSql(`create table "input_requests" ("id" varchar(255) not null, "job_id" varchar(255) not null, "account_id" varchar(255) not null, "step_key" varchar(200) not null, "prompt" text not null, "schema" jsonb null, "status" text not null default 'pending', "answer" jsonb null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "answered_at" timestamptz null, "answered_via" varchar(20) null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "input_requests_account_id_index" on "input_requests" ("account_id");`);
    this.addSql(`alter table "input_requests" add constraint "input_requests_token_hash_unique" unique ("token_hash");`);
    this.addSql(`alter table "input_requests" add constraint "input_requests_job_step_key_unique" unique ("job_id", "step_key");`);

    this.addSql(`alter table "jobs" drop constraint "jobs_status_check";`);
    this.addSql(`alter table "jobs" add constraint "jobs_status_check" check ("status" in ('queued', 'running', 'input_required', 'done', 'failed'));`);

    this.addSql(`alter table "deliveries" drop constraint "deliveries_kind_check";`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_kind_check" check ("kind" in ('job_callback', 'test_callback', 'a2a_push', 'job_input'));`);

    this.addSql(`alter table "input_requests" add constraint "input_requests_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);
    this.addSql(`alter table "input_requests" add constraint "input_requests_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "input_requests" add constraint "input_requests_status_check" check ("status" in ('pending', 'answered', 'timed_out'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "input_requests" cascade;`);

    this.addSql(`alter table "deliveries" drop constraint "deliveries_kind_check";`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_kind_check" check ("kind" in ('job_callback', 'test_callback', 'a2a_push'));`);

    this.addSql(`alter table "jobs" drop constraint "jobs_status_check";`);
    this.addSql(`alter table "jobs" add constraint "jobs_status_check" check ("status" in ('queued', 'running', 'done', 'failed'));`);
  }

}
