import { Migration } from '@mikro-orm/migrations';

export class Migration20261124011316_automation extends Migration {

  override name = 'Migration20261124011316_automation';

  override up(): void | Promise<void> {
    this.addSql(`create table "agent_secrets" ("agent_id" varchar(255) not null, "name" varchar(100) not null, "sealed_value" text not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null, primary key ("agent_id", "name"));`);

    this.addSql(`create table "job_steps" ("job_id" varchar(255) not null, "key" varchar(200) not null, "kind" varchar(20) not null, "status" varchar(20) not null, "result" jsonb null, "cost_micros" bigint not null default '0', "executions" int not null default 1, "seq_after" int null, "started_at" timestamptz not null default now(), "finished_at" timestamptz null, primary key ("job_id", "key"));`);

    this.addSql(`alter table "agents" add "egress_allow" jsonb null, add "cpu_time_limit_ms" int null, add "wall_time_limit_ms" int null;`);

    this.addSql(`alter table "agent_secrets" add constraint "agent_secrets_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "job_steps" add constraint "job_steps_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "agent_secrets" cascade;`);
    this.addSql(`drop table if exists "job_steps" cascade;`);

    this.addSql(`alter table "agents" drop column "egress_allow", drop column "cpu_time_limit_ms", drop column "wall_time_limit_ms";`);
  }

}
