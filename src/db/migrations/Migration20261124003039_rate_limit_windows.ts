import { Migration } from '@mikro-orm/migrations';

export class Migration20261124003039_rate_limit_windows extends Migration {

  override name = 'Migration20261124003039_rate_limit_windows';

  override up(): void | Promise<void> {
    // "if not exists": releases before this one created the same table at run time.
    this.addSql(`create table if not exists "chat_rate_limits" ("key" varchar(255) not null, "points" int not null default 0, "expire" bigint null, primary key ("key"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chat_rate_limits" cascade;`);
  }

}
