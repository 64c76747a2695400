import { api } from "../api";
import { Empty } from "../components/Empty";
import { ErrorBox } from "../components/ErrorBox";
import { Time } from "../components/Time";
import { useAsync } from "../hooks/useAsync";

export function ThreadPage({ id }: { id: string }) {
  const { data: thread, error, loading } = useAsync(() => api.thread(id), [id]);
  const agent = useAsync(async () => (thread ? api.agent(thread.agentId) : null), [thread?.agentId]);
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
        <span className="mono">{thread.id}</span> · started <Time iso={thread.createdAt} />
      </p>
      {thread.messages.length === 0 ? (
        <Empty>This thread has no messages yet.</Empty>
      ) : (
        <ol className="messages" aria-label="Messages">
          {thread.messages.map((m, i) => (
            <li key={i} className={`message role-${m.role}`}>
              <div className="message-head">
                <strong>{m.role}</strong> <Time iso={m.createdAt} />
              </div>
              <div className="message-body">{m.content}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
