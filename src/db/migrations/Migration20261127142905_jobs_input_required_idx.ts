import { Migration } from '@mikro-orm/migrations';

export class Migration20261127142905_jobs_input_required_idx extends Migration {

  override name = 'Migration20261127142905_jobs_input_required_idx';

  override up(): void | Promise<void> {
    this.addSql(`create index "jobs_input_required_idx" on "jobs" ("status") where status = 'input_required';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "jobs_input_required_idx";`);
  }

}
