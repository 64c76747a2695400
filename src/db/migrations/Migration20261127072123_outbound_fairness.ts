import { Migration } from '@mikro-orm/migrations';

export class Migration20261127072123_outbound_fairness extends Migration {

  override name = 'Migration20261127072123_outbound_fairness';

  override up(): void | Promise<void> {
    this.addSql(`alter table "deliveries" add "attempt_lease_until" timestamptz null;`);
    this.addSql(`create index "deliveries_pending_idx" on "deliveries" ("dispatched_at") where "status" = 'pending';`);
    this.addSql(`create index "deliveries_attempt_lease_idx" on "deliveries" ("account_id", "attempt_lease_until") where "attempt_lease_until" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "deliveries_pending_idx";`);
    this.addSql(`drop index "deliveries_attempt_lease_idx";`);
    this.addSql(`alter table "deliveries" drop column "attempt_lease_until";`);
  }

}
