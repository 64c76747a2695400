import { Migration } from '@mikro-orm/migrations';

export class Migration20261125182851_thread_turn_id extends Migration {

  override name = 'Migration20261125182851_thread_turn_id';

  override up(): void | Promise<void> {
    this.addSql(`alter table "threads" add "turn_id" varchar(100) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "threads" drop column "turn_id";`);
  }

}
