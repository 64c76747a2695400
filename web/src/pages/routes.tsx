import type { ReactNode } from "react";
import { AccountPage } from "./AccountPage";
import { AgentPage } from "./AgentPage";
import { AgentsPage } from "./AgentsPage";
import { NewAgentPage } from "./NewAgentPage";
import { NotFoundPage } from "./NotFoundPage";
import { ThreadPage } from "./ThreadPage";
import { TriggerPage } from "./TriggerPage";
import { TriggersPage } from "./TriggersPage";

/** Which page a hash route shows (the route syntax itself lives in ../router.ts). */
export function pageFor([section, id]: string[], refreshAccount: () => Promise<void>): ReactNode {
  if (section === "agents" && id === "new") return <NewAgentPage />;
  if (section === "agents" && id) return <AgentPage id={id} key={id} />;
  if (section === "agents") return <AgentsPage />;
  if (section === "triggers" && id) return <TriggerPage id={id} key={id} onRun={refreshAccount} />;
  if (section === "triggers") return <TriggersPage />;
  if (section === "threads" && id) return <ThreadPage id={id} key={id} />;
  if (section === "account") return <AccountPage onSaved={refreshAccount} />;
  return <NotFoundPage />;
}
