import { Migration } from '@mikro-orm/migrations';

export class Migration20261127084011_job_waiting_for extends Migration {

  override name = 'Migration20261127084011_job_waiting_for';

  override up(): void | Promise<void> {
    this.addSql(`alter table "jobs" add "waiting_for" varchar(32) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "jobs" drop column "waiting_for";`);
  }

}
