import { Migration } from '@mikro-orm/migrations';

export class Migration20261127102259_usage_rollups extends Migration {

  override name = 'Migration20261127102259_usage_rollups';

  override up(): void | Promise<void> {
    this.addSql(`create table "usage_rollups" ("id" bigserial primary key, "account_id" varchar(255) not null, "bucket" timestamptz not null, "agent_id" varchar(255) not null default '', "model" varchar(100) not null default '', "cost_micros" bigint not null default '0', "requests" bigint not null default '0', "input_tokens" bigint not null default '0', "output_tokens" bigint not null default '0');`);
    this.addSql(`alter table "usage_rollups" add constraint "usage_rollups_key_unique" unique ("account_id", "bucket", "agent_id", "model");`);

    this.addSql(`alter table "usage_rollups" add constraint "usage_rollups_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    // Every statement that inserts ledger rows adds its call rows to their hours, in its own
    // transaction (one trigger covers every insert path: the hold, a release, a batch finish, a
    // reclaim, an extra charge). Keys in one order, so two statements never lock them crosswise.
    this.addSql(`create function usage_rollups_add() returns trigger language plpgsql as $$
      begin
        insert into usage_rollups (account_id, bucket, agent_id, model, cost_micros, requests, input_tokens, output_tokens)
        select account_id, date_trunc('hour', created_at, 'UTC'), coalesce(agent_id, ''), coalesce(model, ''),
               -sum(amount_micros), count(*) filter (where kind = 'hold'), sum(input_tokens), sum(output_tokens)
          from new_ledger_rows where kind in ('hold', 'hold_release', 'charge')
         group by 1, 2, 3, 4 order by 1, 2, 3, 4
        on conflict (account_id, bucket, agent_id, model) do update set
          cost_micros = usage_rollups.cost_micros + excluded.cost_micros, requests = usage_rollups.requests + excluded.requests,
          input_tokens = usage_rollups.input_tokens + excluded.input_tokens, output_tokens = usage_rollups.output_tokens + excluded.output_tokens;
        return null;
      end $$;`);
    this.addSql(`create trigger ledger_entries_usage_rollup after insert on ledger_entries referencing new table as new_ledger_rows
                 for each statement execute function usage_rollups_add();`);
    // The rows already there (creating the trigger locks out inserts until this commits: none is missed or counted twice).
    this.addSql(`insert into usage_rollups (account_id, bucket, agent_id, model, cost_micros, requests, input_tokens, output_tokens)
                 select account_id, date_trunc('hour', created_at, 'UTC'), coalesce(agent_id, ''), coalesce(model, ''),
                        -sum(amount_micros), count(*) filter (where kind = 'hold'), sum(input_tokens), sum(output_tokens)
                   from ledger_entries where kind in ('hold', 'hold_release', 'charge') group by 1, 2, 3, 4;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists ledger_entries_usage_rollup on ledger_entries;`);
    this.addSql(`drop function if exists usage_rollups_add();`);
    this.addSql(`drop table if exists "usage_rollups" cascade;`);
  }

}
