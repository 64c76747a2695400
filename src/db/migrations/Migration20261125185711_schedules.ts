import { Migration } from '@mikro-orm/migrations';

export class Migration20261125185711_schedules extends Migration {

  override name = 'Migration20261125185711_schedules';

  override up(): void | Promise<void> {
    this.addSql(`create table "schedules" ("id" varchar(255) not null, "account_id" varchar(255) not null, "agent_id" varchar(255) not null, "cron" varchar(200) null, "every_seconds" int null, "timezone" varchar(100) not null, "payload" jsonb null, "overlap" text not null default 'skip', "description" text null, "paused" boolean not null default false, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "schedules_account_id_index" on "schedules" ("account_id");`);
    this.addSql(`create index "schedules_agent_id_index" on "schedules" ("agent_id");`);

    this.addSql(`alter table "jobs" add "schedule_id" varchar(255) null;`);
    this.addSql(`create index "jobs_schedule_created_idx" on "jobs" ("schedule_id", "created_at") where "schedule_id" is not null;`);

    this.addSql(`alter table "schedules" add constraint "schedules_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "schedules" add constraint "schedules_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "schedules" add constraint "schedules_cron_xor_every" check ((cron is null) <> (every_seconds is null));`);
    this.addSql(`alter table "schedules" add constraint "schedules_overlap_check" check ("overlap" in ('skip', 'buffer_one', 'allow_all'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "schedules" cascade;`);

    this.addSql(`drop index "jobs_schedule_created_idx";`);
    this.addSql(`alter table "jobs" drop column "schedule_id";`);
  }

}
