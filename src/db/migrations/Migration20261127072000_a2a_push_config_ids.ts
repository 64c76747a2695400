import { Migration } from '@mikro-orm/migrations';

/**
 * The push configs of a task, read with a snapshot of their own (a VOLATILE SQL function is never
 * inlined and takes a fresh snapshot per call in READ COMMITTED): a state change calls it after it
 * has locked the task's state row, so it sees every config whose insert committed before that
 * lock, not only those its statement's snapshot holds (src/outbound/store.ts a2aPushCte).
 */
export class Migration20261127072000_a2a_push_config_ids extends Migration {

  override name = 'Migration20261127072000_a2a_push_config_ids';

  override up(): void | Promise<void> {
    this.addSql(`create function "a2a_push_config_ids"(task text) returns setof varchar language sql volatile
      as $$ select "id" from "a2a_push_configs" where "task_id" = task $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function "a2a_push_config_ids"(text);`);
  }

}
