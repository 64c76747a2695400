import { Migration } from '@mikro-orm/migrations';

export class Migration20261127075951_schedule_missed_firings extends Migration {

  override name = 'Migration20261127075951_schedule_missed_firings';

  override up(): void | Promise<void> {
    this.addSql(`create table "schedule_missed_firings" ("firing_key" varchar(300) not null, "schedule_id" varchar(255) not null, "scheduled_at" timestamptz not null, "error" text not null, "recorded_at" timestamptz not null default now(), primary key ("firing_key"));`);
    this.addSql(`create index "schedule_missed_firings_schedule_id_index" on "schedule_missed_firings" ("schedule_id");`);

    this.addSql(`alter table "schedule_missed_firings" add constraint "schedule_missed_firings_schedule_id_foreign" foreign key ("schedule_id") references "schedules" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "schedule_missed_firings" cascade;`);
  }

}
