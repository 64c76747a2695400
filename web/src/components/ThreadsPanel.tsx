import { api } from "../api";
import { usePaged } from "../hooks/usePaged";
import { Empty } from "./Empty";
import { ErrorBox } from "./ErrorBox";
import { LoadMore } from "./LoadMore";
import { Time } from "./Time";

const PAGE = 20;

/** An agent's threads, newest first, a page at a time. */
export function ThreadsPanel({ agentId }: { agentId: string }) {
  const threads = usePaged((after) => api.agentThreads(agentId, PAGE, after), [agentId]);
  return (
    <section className="panel" id="threads" aria-labelledby="threads-h">
      <h2 id="threads-h">Threads</h2>
      <ErrorBox error={threads.error} />
      {!threads.loading && threads.items.length === 0 ? (
        <Empty>No threads yet. Each chat call without a thread_id, and each run, starts one.</Empty>
      ) : (
        <ul className="plain-list" data-testid="agent-threads">
          {threads.items.map((t) => (
            <li key={t.id}>
              <a href={`#/threads/${t.id}`} className="mono">
                {t.id}
              </a>{" "}
              <span className="muted">
                <Time iso={t.createdAt} />
              </span>
            </li>
          ))}
        </ul>
      )}
      <LoadMore hasMore={threads.hasMore} loading={threads.loading} onMore={() => void threads.loadMore()} what="threads" />
    </section>
  );
}
