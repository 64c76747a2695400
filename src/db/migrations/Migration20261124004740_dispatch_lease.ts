import { Migration } from '@mikro-orm/migrations';

export class Migration20261124004740_dispatch_lease extends Migration {

  override name = 'Migration20261124004740_dispatch_lease';

  override up(): void | Promise<void> {
    this.addSql(`alter table "jobs" add "dispatch_lease_until" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "jobs" drop column "dispatch_lease_until";`);
  }

}
