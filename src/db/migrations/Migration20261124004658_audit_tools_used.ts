import { Migration } from '@mikro-orm/migrations';

export class Migration20261124004658_audit_tools_used extends Migration {

  override name = 'Migration20261124004658_audit_tools_used';

  override up(): void | Promise<void> {
    this.addSql(`alter table "audit_entries" add "tools_used" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "audit_entries" drop column "tools_used";`);
  }

}
