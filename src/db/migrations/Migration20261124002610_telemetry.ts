import { Migration } from '@mikro-orm/migrations';

export class Migration20261124002610_telemetry extends Migration {

  override name = 'Migration20261124002610_telemetry';

  override up(): void | Promise<void> {
    this.addSql(`alter table "jobs" add "trace_context" varchar(64) null;`);
    this.addSql(`create index "jobs_active_idx" on "jobs" ("status") where status in ('queued', 'running');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "jobs_active_idx";`);
    this.addSql(`alter table "jobs" drop column "trace_context";`);
  }

}
