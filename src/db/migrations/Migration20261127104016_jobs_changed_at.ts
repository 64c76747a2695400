import { Migration } from '@mikro-orm/migrations';

export class Migration20261127104016_jobs_changed_at extends Migration {

  override name = 'Migration20261127104016_jobs_changed_at';

  override up(): void | Promise<void> {
    this.addSql(`create index "jobs_changed_at_idx" on "jobs" ((coalesce("finished_at", "started_at", "created_at")));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "jobs_changed_at_idx";`);
  }

}
