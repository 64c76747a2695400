import type { JobStatusEvent } from "./store.js";

/** What a `jobStatusChanged` subscriber asked for, within its own account. */
export interface EventMatch {
  jobId?: string | null;
  triggerId?: string | null;
  agentId?: string | null;
}

type Listener = { match: EventMatch; deliver: (e: JobStatusEvent) => void };
interface AccountListeners {
  /** Subscribers of one job, by job id: an event reaches only its job's. */
  byJob: Map<string, Set<Listener>>;
  /** Subscribers of the whole account, a trigger or an agent: matched one by one. */
  rest: Set<Listener>;
}

/**
 * The subscribers of one API instance, indexed by account and then by job, so an event is matched
 * only against its own account's subscribers (and a job's event only against that job's, plus
 * the account-wide ones): another tenant's subscriptions cost nothing per event.
 */
export class SubscriberIndex {
  private readonly accounts = new Map<string, AccountListeners>();

  /** Registers a subscriber; the returned function removes it. */
  add(accountId: string, match: EventMatch, deliver: (e: JobStatusEvent) => void): () => void {
    let account = this.accounts.get(accountId);
    if (!account) this.accounts.set(accountId, (account = { byJob: new Map(), rest: new Set() }));
    const listener: Listener = { match, deliver };
    const set = match.jobId ? (account.byJob.get(match.jobId) ?? new Set<Listener>()) : account.rest;
    if (match.jobId) account.byJob.set(match.jobId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (match.jobId && set.size === 0) account.byJob.delete(match.jobId);
      if (account.rest.size === 0 && account.byJob.size === 0 && this.accounts.get(accountId) === account) this.accounts.delete(accountId);
    };
  }

  publish(e: JobStatusEvent): void {
    const account = this.accounts.get(e.accountId);
    if (!account) return;
    for (const l of account.byJob.get(e.jobId) ?? []) if (matches(l.match, e)) l.deliver(e);
    for (const l of account.rest) if (matches(l.match, e)) l.deliver(e);
  }

  /** Accounts with at least one subscriber (for tests and metrics). */
  accountCount(): number {
    return this.accounts.size;
  }
}

function matches(m: EventMatch, e: JobStatusEvent): boolean {
  return (!m.jobId || e.jobId === m.jobId) && (!m.triggerId || e.triggerId === m.triggerId) && (!m.agentId || e.agentId === m.agentId);
}
