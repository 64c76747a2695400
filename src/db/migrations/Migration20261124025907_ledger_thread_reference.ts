import { Migration } from '@mikro-orm/migrations';

export class Migration20261124025907_ledger_thread_reference extends Migration {

  override name = 'Migration20261124025907_ledger_thread_reference';

  override up(): void | Promise<void> {
    this.addSql(`drop index "ledger_entries_thread_idx";`);
    this.addSql(`create index "ledger_entries_thread_reference_idx" on "ledger_entries" ("thread_id", "reference") where "thread_id" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "ledger_entries_thread_reference_idx";`);
    this.addSql(`create index "ledger_entries_thread_idx" on "ledger_entries" ("thread_id") where "thread_id" is not null;`);
  }

}
