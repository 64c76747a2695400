import { Migration } from '@mikro-orm/migrations';

export class Migration20261125182539_job_source extends Migration {

  override name = 'Migration20261125182539_job_source';

  override up(): void | Promise<void> {
    this.addSql(`create table "agent_idempotency_records" ("agent_id" varchar(255) not null, "source" text not null, "key" varchar(255) not null, "job_id" varchar(255) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null default now(), primary key ("agent_id", "source", "key"));`);
    this.addSql(`create index "agent_idempotency_records_expires_at_index" on "agent_idempotency_records" ("expires_at");`);

    this.addSql(`alter table "jobs" add "source" text not null default 'webhook';`);
    this.addSql(`alter table "jobs" add constraint "jobs_source_check" check ("source" in ('webhook', 'schedule', 'a2a', 'mcp', 'replay'));`);

    this.addSql(`alter table "agent_idempotency_records" add constraint "agent_idempotency_records_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_idempotency_records" add constraint "agent_idempotency_records_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_idempotency_records" add constraint "agent_idempotency_records_source_check" check ("source" in ('webhook', 'schedule', 'a2a', 'mcp', 'replay'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "agent_idempotency_records" cascade;`);

    this.addSql(`alter table "jobs" drop constraint "jobs_source_check";`);
    this.addSql(`alter table "jobs" drop column "source";`);
  }

}
