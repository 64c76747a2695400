/**
 * Group commit for chat turns' finishes, per account (docs/design/billing-reservations.md, *Group
 * commit of the finish*). Every finish updates its account's balance row and commits
 * synchronously, and PostgreSQL keeps the row locked until the commit's WAL flush is done, so
 * concurrent turns of one account queue on that row one flush at a time. Here, while one finish
 * statement of an account is running, that account's next finishes wait in this process and then
 * go together: one statement, one lock of the balance row, one flush for all of them. Nothing
 * waits when nothing is in flight (a lone turn's finish is sent at once), and different accounts
 * never wait for each other. Like the webhook ingest batcher (webhooks/ingest-batcher.ts), every
 * caller's promise settles only after its batch's statement has committed.
 *
 * The statement decides per turn (a turn whose hold or lease is gone is refused alone, the others
 * of its batch settle); when the statement fails as a whole, nothing of it committed and each turn
 * is retried alone, so a turn never fails for its neighbours.
 */
export class FinishBatcher<T extends { accountId: string }, O> {
  private readonly accounts = new Map<string, { turn: T; resolve: (o: O) => void; reject: (e: unknown) => void }[]>();

  constructor(
    /** Writes the turns (all of one account) in one statement, one outcome per turn, in order; throws when nothing committed. */
    private readonly write: (turns: T[]) => Promise<O[]>,
    private readonly maxBatch = 64,
  ) {}

  finish(turn: T): Promise<O> {
    return new Promise((resolve, reject) => {
      const queued = this.accounts.get(turn.accountId);
      if (queued) {
        queued.push({ turn, resolve, reject });
        return;
      }
      // Nothing of this account in flight: this turn goes now; later ones queue behind it.
      this.accounts.set(turn.accountId, []);
      void this.drain(turn.accountId, [{ turn, resolve, reject }]);
    });
  }

  private async drain(accountId: string, first: { turn: T; resolve: (o: O) => void; reject: (e: unknown) => void }[]): Promise<void> {
    let batch = first;
    for (;;) {
      await this.flush(batch);
      const queued = this.accounts.get(accountId)!;
      if (queued.length === 0) {
        this.accounts.delete(accountId);
        return;
      }
      batch = queued.splice(0, this.maxBatch);
    }
  }

  private async flush(batch: { turn: T; resolve: (o: O) => void; reject: (e: unknown) => void }[]): Promise<void> {
    try {
      const outcomes = await this.write(batch.map((b) => b.turn));
      batch.forEach((b, i) => b.resolve(outcomes[i]!));
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // The statement failed, so none of it committed: each turn alone, so one cannot fail another.
      await Promise.all(
        batch.map((b) =>
          this.write([b.turn]).then(
            ([o]) => b.resolve(o!),
            (e: unknown) => b.reject(e),
          ),
        ),
      );
    }
  }
}
