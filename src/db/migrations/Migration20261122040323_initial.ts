import { Migration } from '@mikro-orm/migrations';

export class Migration20261122040323_initial extends Migration {

  override name = 'Migration20261122040323_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "accounts" ("id" varchar(255) not null, "name" varchar(200) not null, "balance_micros" bigint not null default '0', "retention_days" int not null default 30, "relax_signature_timestamp" boolean not null default false, "default_rate_limit_per_minute" int null, "created_at" timestamptz not null default now(), primary key ("id"));`);

    this.addSql(`create table "admin_tokens" ("id" varchar(255) not null, "account_id" varchar(255) not null, "token_hash" varchar(64) not null, "prefix" varchar(16) not null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "admin_tokens_account_id_index" on "admin_tokens" ("account_id");`);
    this.addSql(`alter table "admin_tokens" add constraint "admin_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "agents" ("id" varchar(255) not null, "account_id" varchar(255) not null, "name" varchar(200) not null, "instructions" text not null default '', "default_model" varchar(100) not null, "allowed_models" jsonb null, "script" text null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "agents_account_id_created_at_index" on "agents" ("account_id", "created_at");`);

    this.addSql(`create table "api_keys" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "name" varchar(200) not null, "key_hash" varchar(64) not null, "prefix" varchar(16) not null, "last4" varchar(4) not null, "rate_limit_per_minute" int null, "last_used_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "api_keys_account_id_index" on "api_keys" ("account_id");`);
    this.addSql(`create index "api_keys_agent_id_index" on "api_keys" ("agent_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "ledger_entries" ("id" bigserial primary key, "account_id" varchar(255) not null, "amount_micros" bigint not null, "kind" text not null, "reference" varchar(100) null, "created_at" timestamptz not null default now());`);
    this.addSql(`create index "ledger_entries_account_id_created_at_index" on "ledger_entries" ("account_id", "created_at");`);

    this.addSql(`create table "threads" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "busy_until" timestamptz null, "message_count" int not null default 0, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "threads_account_id_index" on "threads" ("account_id");`);
    this.addSql(`create index "threads_agent_id_index" on "threads" ("agent_id");`);

    this.addSql(`create table "messages" ("id" bigserial primary key, "thread_id" varchar(255) not null, "seq" int not null, "role" varchar(20) not null, "content" text not null, "created_at" timestamptz not null default now());`);
    this.addSql(`alter table "messages" add constraint "messages_thread_id_seq_unique" unique ("thread_id", "seq");`);

    this.addSql(`create table "triggers" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "description" text null, "active" boolean not null default true, "secret_required" boolean not null default true, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "triggers_account_id_index" on "triggers" ("account_id");`);
    this.addSql(`create index "triggers_agent_id_index" on "triggers" ("agent_id");`);

    this.addSql(`create table "jobs" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "trigger_id" varchar(255) null, "status" text not null default 'queued', "thread_id" varchar(255) null, "result" jsonb null, "error" text null, "attempts" int not null default 0, "cost_micros" bigint not null default '0', "logs" jsonb null, "dispatched_at" timestamptz null, "created_at" timestamptz not null default now(), "started_at" timestamptz null, "finished_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "jobs_account_id_index" on "jobs" ("account_id");`);
    this.addSql(`create index "jobs_trigger_id_created_at_index" on "jobs" ("trigger_id", "created_at");`);
    this.addSql(`create index "jobs_agent_id_created_at_index" on "jobs" ("agent_id", "created_at");`);
    this.addSql(`create index "jobs_undispatched_idx" on "jobs" ("created_at") where "dispatched_at" is null;`);

    this.addSql(`create table "audit_entries" ("id" varchar(255) not null, "account_id" varchar(255) not null, "job_id" varchar(255) null, "kind" varchar(40) not null, "payload" jsonb null, "result" jsonb null, "model_calls" jsonb null, "cost_micros" bigint not null default '0', "payload_purged_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "audit_entries_job_id_index" on "audit_entries" ("job_id");`);
    this.addSql(`create index "audit_entries_account_id_created_at_index" on "audit_entries" ("account_id", "created_at");`);

    this.addSql(`create table "idempotency_records" ("trigger_id" varchar(255) not null, "key" varchar(255) not null, "job_id" varchar(255) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null default now(), primary key ("trigger_id", "key"));`);
    this.addSql(`create index "idempotency_records_expires_at_index" on "idempotency_records" ("expires_at");`);

    this.addSql(`create table "trigger_secrets" ("id" varchar(255) not null, "trigger_id" varchar(255) not null, "sealed_secret" text not null, "expires_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "trigger_secrets_trigger_id_expires_at_index" on "trigger_secrets" ("trigger_id", "expires_at");`);

    this.addSql(`alter table "accounts" add constraint "accounts_balance_non_negative" check (balance_micros >= 0);`);

    this.addSql(`alter table "admin_tokens" add constraint "admin_tokens_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "agents" add constraint "agents_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_kind_check" check ("kind" in ('top_up', 'initial_balance', 'hold', 'hold_release', 'charge', 'refund'));`);

    this.addSql(`alter table "threads" add constraint "threads_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "threads" add constraint "threads_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "messages" add constraint "messages_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on delete cascade;`);

    this.addSql(`alter table "triggers" add constraint "triggers_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "triggers" add constraint "triggers_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "jobs" add constraint "jobs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "jobs" add constraint "jobs_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "jobs" add constraint "jobs_trigger_id_foreign" foreign key ("trigger_id") references "triggers" ("id") on delete set null;`);
    this.addSql(`alter table "jobs" add constraint "jobs_status_check" check ("status" in ('queued', 'running', 'done', 'failed'));`);

    this.addSql(`alter table "audit_entries" add constraint "audit_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "audit_entries" add constraint "audit_entries_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);

    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_trigger_id_foreign" foreign key ("trigger_id") references "triggers" ("id") on delete cascade;`);
    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);

    this.addSql(`alter table "trigger_secrets" add constraint "trigger_secrets_trigger_id_foreign" foreign key ("trigger_id") references "triggers" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "admin_tokens" drop constraint "admin_tokens_account_id_foreign";`);
    this.addSql(`alter table "agents" drop constraint "agents_account_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_account_id_foreign";`);
    this.addSql(`alter table "ledger_entries" drop constraint "ledger_entries_account_id_foreign";`);
    this.addSql(`alter table "threads" drop constraint "threads_account_id_foreign";`);
    this.addSql(`alter table "triggers" drop constraint "triggers_account_id_foreign";`);
    this.addSql(`alter table "jobs" drop constraint "jobs_account_id_foreign";`);
    this.addSql(`alter table "audit_entries" drop constraint "audit_entries_account_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_agent_id_foreign";`);
    this.addSql(`alter table "threads" drop constraint "threads_agent_id_foreign";`);
    this.addSql(`alter table "triggers" drop constraint "triggers_agent_id_foreign";`);
    this.addSql(`alter table "jobs" drop constraint "jobs_agent_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_thread_id_foreign";`);
    this.addSql(`alter table "jobs" drop constraint "jobs_trigger_id_foreign";`);
    this.addSql(`alter table "idempotency_records" drop constraint "idempotency_records_trigger_id_foreign";`);
    this.addSql(`alter table "trigger_secrets" drop constraint "trigger_secrets_trigger_id_foreign";`);
    this.addSql(`alter table "audit_entries" drop constraint "audit_entries_job_id_foreign";`);
    this.addSql(`alter table "idempotency_records" drop constraint "idempotency_records_job_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "admin_tokens" cascade;`);
    this.addSql(`drop table if exists "agents" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "ledger_entries" cascade;`);
    this.addSql(`drop table if exists "threads" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
    this.addSql(`drop table if exists "triggers" cascade;`);
    this.addSql(`drop table if exists "jobs" cascade;`);
    this.addSql(`drop table if exists "audit_entries" cascade;`);
    this.addSql(`drop table if exists "idempotency_records" cascade;`);
    this.addSql(`drop table if exists "trigger_secrets" cascade;`);
  }

}
