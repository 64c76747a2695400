import type { ReactNode } from "react";
import type { JobStatus } from "../api";
import { AccountPage } from "./AccountPage";
import { AdminTokensPage } from "./AdminTokensPage";
import { AgentPage } from "./AgentPage";
import { AgentsPage } from "./AgentsPage";
import { JobPage } from "./JobPage";
import { JobsPage } from "./JobsPage";
import { NewAgentPage } from "./NewAgentPage";
import { NotFoundPage } from "./NotFoundPage";
import { ThreadPage } from "./ThreadPage";
import { TriggerPage } from "./TriggerPage";
import { TriggersPage } from "./TriggersPage";
import { UsagePage } from "./UsagePage";

const JOB_STATUSES = ["queued", "running", "input_required", "done", "failed"];

/** Which page a hash route shows (the route syntax itself lives in ../router.ts). */
export function pageFor([section, id, sub]: string[], refreshAccount: () => Promise<void>): ReactNode {
  if (section === "agents" && id === "new") return <NewAgentPage />;
  if (section === "agents" && id) return <AgentPage id={id} key={id} />;
  if (section === "agents") return <AgentsPage />;
  if (section === "triggers" && id && sub === "jobs") return <JobsPage triggerId={id} key={`t-${id}`} />;
  if (section === "triggers" && id) return <TriggerPage id={id} key={id} onRun={refreshAccount} />;
  if (section === "triggers") return <TriggersPage />;
  if (section === "threads" && id) return <ThreadPage id={id} key={id} />;
  if (section === "jobs" && id && JOB_STATUSES.includes(id)) return <JobsPage status={id.toUpperCase() as JobStatus} key={id} />;
  if (section === "jobs" && id) return <JobPage id={id} key={id} />;
  if (section === "jobs") return <JobsPage key="all" />;
  if (section === "usage") return <UsagePage />;
  if (section === "tokens") return <AdminTokensPage />;
  if (section === "account") return <AccountPage onSaved={refreshAccount} />;
  return <NotFoundPage />;
}
