import { AgentForm } from "../components/AgentForm";
import { go } from "../router";

export function NewAgentPage() {
  return (
    <section>
      <p className="crumbs">
        <a href="#/agents">Agents</a> /
      </p>
      <h1>New agent</h1>
      <AgentForm submitLabel="Create agent" onSaved={(a) => go(`agents/${a.id}`)} />
    </section>
  );
}
