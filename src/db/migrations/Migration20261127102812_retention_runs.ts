import { Migration } from '@mikro-orm/migrations';

export class Migration20261127102812_retention_runs extends Migration {

  override name = 'Migration20261127102812_retention_runs';

  override up(): void | Promise<void> {
    this.addSql(`create table "retention_runs" ("id" varchar(100) not null, "as_of" timestamptz not null, "status" varchar(16) not null, "batches" int not null default 0, "payloads" int not null default 0, "idempotency_records" int not null default 0, "error" text null, "started_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "finished_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "retention_runs_started_at_index" on "retention_runs" ("started_at");`);

    this.addSql(`create index "audit_entries_unpurged_idx" on "audit_entries" ("created_at") where "payload_purged_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "retention_runs" cascade;`);

    this.addSql(`drop index "audit_entries_unpurged_idx";`);
  }

}
