import { api } from "../api";
import { Empty } from "../components/Empty";
import { ErrorBox } from "../components/ErrorBox";
import { LoadMore } from "../components/LoadMore";
import { Time } from "../components/Time";
import { useAsync } from "../hooks/useAsync";
import { usePaged } from "../hooks/usePaged";

const PAGE = 50;

export function ThreadPage({ id }: { id: string }) {
  const { data: thread, error, loading } = useAsync(() => api.thread(id), [id]);
  const agent = useAsync(async () => (thread ? api.agent(thread.agentId) : null), [thread?.agentId]);
  const messages = usePaged((after) => api.threadMessages(id, PAGE, after), [id]);
  if (loading && !thread) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!thread)
    return (
      <section>
        <h1>Thread not found</h1>
        <p>It does not exist or belongs to another account.</p>
      </section>
    );
  return (
    <section>
      <p className="crumbs">
        {agent.data ? (
          <>
            <a href={`#/agents/${agent.data.id}`}>{agent.data.name}</a> /
          </>
        ) : null}
      </p>
      <h1>Thread</h1>
      <p className="meta">
        <span className="mono">{thread.id}</span> · started <Time iso={thread.createdAt} /> · cost <span data-testid="thread-cost">${thread.cost}</span>
      </p>
      <ErrorBox error={messages.error} />
      {!messages.loading && messages.items.length === 0 ? (
        <Empty>This thread has no messages yet.</Empty>
      ) : (
        <ol className="messages" aria-label="Messages">
          {messages.items.map((m) => (
            <li key={m.seq} className={`message role-${m.role}`}>
              <div className="message-head">
                <strong>{m.role}</strong> <Time iso={m.createdAt} />
              </div>
              <div className="message-body">{m.content}</div>
            </li>
          ))}
        </ol>
      )}
      <LoadMore hasMore={messages.hasMore} loading={messages.loading} onMore={() => void messages.loadMore()} what="messages" />
    </section>
  );
}
