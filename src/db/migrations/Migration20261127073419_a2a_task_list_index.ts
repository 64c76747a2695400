import { Migration } from '@mikro-orm/migrations';

export class Migration20261127073419_a2a_task_list_index extends Migration {

  override name = 'Migration20261127073419_a2a_task_list_index';

  override up(): void | Promise<void> {
    // Job tasks keep their job's state and status time from now on (for ListTasks' filter and
    // order, served by the index below); the rows written before take them from their jobs once.
    this.addSql(`update "a2a_tasks" t set "state" = case
        when j."status" = 'queued' then 'submitted' when j."status" = 'running' then 'working' when j."status" = 'done' then 'completed'
        when j."error" = 'cancelled' then 'canceled' else 'failed' end,
      "updated_at" = coalesce(j."finished_at", j."started_at", j."created_at")
      from "jobs" j where j."id" = t."id" and t."kind" = 'job';`);
    this.addSql(`create index "a2a_tasks_agent_updated_idx" on "a2a_tasks" ("agent_id", "updated_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "a2a_tasks_agent_updated_idx";`);
  }

}
