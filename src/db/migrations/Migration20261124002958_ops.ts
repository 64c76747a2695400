import { Migration } from '@mikro-orm/migrations';

export class Migration20261124002958_ops extends Migration {

  override name = 'Migration20261124002958_ops';

  override up(): void | Promise<void> {
    this.addSql(`alter table "admin_tokens" add "name" varchar(200) not null default '', add "last_used_at" timestamptz null;`);

    this.addSql(`alter table "ledger_entries" add "agent_id" varchar(255) null, add "api_key_id" varchar(255) null, add "thread_id" varchar(255) null, add "trigger_id" varchar(255) null, add "job_id" varchar(255) null, add "model" varchar(100) null, add "input_tokens" int not null default 0, add "output_tokens" int not null default 0;`);
    this.addSql(`create index "ledger_entries_account_id_idx" on "ledger_entries" ("account_id", "id");`);
    this.addSql(`create index "ledger_entries_thread_idx" on "ledger_entries" ("thread_id") where "thread_id" is not null;`);
    this.addSql(`create index "ledger_entries_job_idx" on "ledger_entries" ("job_id") where "job_id" is not null;`);

    this.addSql(`create index "threads_agent_created_idx" on "threads" ("agent_id", "created_at", "id");`);

    this.addSql(`alter table "jobs" add "replay_of" varchar(255) null;`);
    this.addSql(`create index "jobs_account_created_idx" on "jobs" ("account_id", "created_at", "id");`);
    this.addSql(`create index "jobs_account_status_created_idx" on "jobs" ("account_id", "status", "created_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "admin_tokens" drop column "name", drop column "last_used_at";`);

    this.addSql(`drop index "jobs_account_created_idx";`);
    this.addSql(`drop index "jobs_account_status_created_idx";`);
    this.addSql(`alter table "jobs" drop column "replay_of";`);

    this.addSql(`drop index "ledger_entries_account_id_idx";`);
    this.addSql(`drop index "ledger_entries_thread_idx";`);
    this.addSql(`drop index "ledger_entries_job_idx";`);
    this.addSql(`alter table "ledger_entries" drop column "agent_id", drop column "api_key_id", drop column "thread_id", drop column "trigger_id", drop column "job_id", drop column "model", drop column "input_tokens", drop column "output_tokens";`);

    this.addSql(`drop index "threads_agent_created_idx";`);
  }

}
