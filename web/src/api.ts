import { createClient, type Client } from "graphql-ws";

/** The console talks only to the public GraphQL API (HTTP + graphql-ws), with the admin token. */

const TOKEN_KEY = "agw.adminToken";

// One list of supported models for the server and the console.
export { SUPPORTED_MODELS as MODELS, DEFAULT_MODEL } from "../../src/providers/models";
export const MAX_PAYLOAD_BYTES = 1_048_576;

export const getToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (t: string) => sessionStorage.setItem(TOKEN_KEY, t);
export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  closeSocket();
}

export class ApiError extends Error {
  constructor(
    message: string,
    public code?: string,
    public param?: string,
    public status?: number,
  ) {
    super(message);
  }
}

const listeners = new Set<() => void>();
/** Called when the server rejects the token (so the app can go back to sign in). */
export function onUnauthenticated(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Turns a GraphQL error into words a person can act on. */
function explain(e: { message?: string; extensions?: Record<string, unknown> } | undefined, status: number): ApiError {
  const code = e?.extensions?.code as string | undefined;
  const param = e?.extensions?.param as string | undefined;
  if (code === "UNAUTHENTICATED" || status === 401) return new ApiError("The admin token was not accepted. Sign in again with a valid adm_… token.", "UNAUTHENTICATED", undefined, status);
  if (code === "FORBIDDEN") return new ApiError(e?.message || "This token may not do that.", code, param, status);
  if (code === "INTERNAL_SERVER_ERROR") return new ApiError("The server ran into an error. Try again in a moment.", code, param, status);
  if (status === 429) return new ApiError("Too many requests. Wait a moment and try again.", code, param, status);
  return new ApiError(e?.message || `The request failed (HTTP ${status}).`, code, param, status);
}

export async function gql<T>(query: string, variables?: Record<string, unknown>, token = getToken()): Promise<T> {
  let res: Response;
  try {
    res = await fetch("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError("Could not reach the server. Check your connection and that Agent Gateway is running.", "NETWORK");
  }
  let body: { data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The server answered HTTP ${res.status} without a readable body.`, "BAD_RESPONSE", undefined, res.status);
  }
  if (body.errors?.length || !body.data) {
    const err = explain(body.errors?.[0], res.status);
    if (err.code === "UNAUTHENTICATED") listeners.forEach((fn) => fn());
    throw err;
  }
  return body.data;
}

// ---- graphql-ws ---------------------------------------------------------------------------------

let socket: Client | undefined;
let socketToken: string | undefined;
const socketListeners = new Set<(up: boolean) => void>();
let socketUp = false;

export function closeSocket(): void {
  socket?.dispose();
  socket = undefined;
  socketToken = undefined;
}

function setUp(up: boolean) {
  socketUp = up;
  socketListeners.forEach((fn) => fn(up));
}
export const isSocketUp = () => socketUp;
export function onSocketState(fn: (up: boolean) => void): () => void {
  socketListeners.add(fn);
  return () => socketListeners.delete(fn);
}

function client(): Client {
  const token = getToken() ?? "";
  if (socket && socketToken === token) return socket;
  closeSocket();
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  socketToken = token;
  socket = createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** n, 10_000))),
    on: { connected: () => setUp(true), closed: () => setUp(false), error: () => setUp(false) },
  });
  return socket;
}

export interface JobStatusEvent {
  jobId: string;
  status: JobStatus;
  error: string | null;
  triggerId: string | null;
  agentId: string;
  at: string;
}

/** Subscribes to jobStatusChanged; returns an unsubscribe function. */
export function subscribeJobs(
  filter: { jobId?: string; triggerId?: string; agentId?: string },
  onEvent: (e: JobStatusEvent) => void,
  onDrop?: () => void,
): () => void {
  return client().subscribe<{ jobStatusChanged: JobStatusEvent }>(
    {
      query: `subscription($jobId: ID, $triggerId: ID, $agentId: ID) {
        jobStatusChanged(jobId: $jobId, triggerId: $triggerId, agentId: $agentId) { jobId status error triggerId agentId at }
      }`,
      variables: filter,
    },
    {
      next: (v) => v.data && onEvent(v.data.jobStatusChanged),
      error: () => onDrop?.(),
      complete: () => {},
    },
  );
}

// ---- types and operations -----------------------------------------------------------------------

export type JobStatus = "QUEUED" | "RUNNING" | "DONE" | "FAILED";

export interface Account {
  id: string;
  name: string;
  balance: string;
}
export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  lastUsedAt: string | null;
  createdAt: string;
}
export interface TriggerSummary {
  id: string;
  agentId: string;
  description: string | null;
  active: boolean;
  webhookUrl: string;
  createdAt: string;
  agent?: { id: string; name: string } | null;
}
export interface Agent {
  id: string;
  name: string;
  instructions: string;
  defaultModel: string;
  allowedModels: string[] | null;
  kind: "AUTOMATION" | "CHAT";
  script: string | null;
  createdAt: string;
  updatedAt: string;
  apiKeys: ApiKey[];
  triggers: TriggerSummary[];
}
export interface LogEntry {
  jobId: string;
  time: string;
  status: JobStatus;
  durationMs: number | null;
  threadId: string | null;
  error: string | null;
}
export interface Trigger extends TriggerSummary {
  secret: string | null;
  secretRequired: boolean;
  logs: LogEntry[];
}
export interface Job {
  id: string;
  status: JobStatus;
  triggerId: string | null;
  agentId: string;
  threadId: string | null;
  result: unknown;
  error: string | null;
  attempts: number;
  cost: string;
  logs: string[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}
export interface Thread {
  id: string;
  agentId: string;
  createdAt: string;
  messages: { role: string; content: string; createdAt: string }[];
}

const AGENT_FIELDS = `id name instructions defaultModel allowedModels kind script createdAt updatedAt
  apiKeys { id name prefix last4 lastUsedAt createdAt }
  triggers { id agentId description active webhookUrl createdAt }`;
const TRIGGER_FIELDS = `id agentId description active secretRequired webhookUrl secret createdAt agent { id name }`;
const JOB_FIELDS = `id status triggerId agentId threadId result error attempts cost logs createdAt startedAt finishedAt`;

export const api = {
  me: (token?: string) => gql<{ me: Account }>(`{ me { id name balance } }`, undefined, token).then((d) => d.me),
  agents: () => gql<{ agents: Agent[] }>(`{ agents { ${AGENT_FIELDS} } }`).then((d) => d.agents),
  agent: (id: string) => gql<{ agent: Agent | null }>(`query($id: ID!) { agent(id: $id) { ${AGENT_FIELDS} } }`, { id }).then((d) => d.agent),
  createAgent: (input: Record<string, unknown>) =>
    gql<{ createAgent: Agent }>(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { ${AGENT_FIELDS} } }`, { i: input }).then((d) => d.createAgent),
  updateAgent: (id: string, input: Record<string, unknown>) =>
    gql<{ updateAgent: Agent }>(`mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { ${AGENT_FIELDS} } }`, { id, i: input }).then(
      (d) => d.updateAgent,
    ),
  deleteAgent: (id: string) => gql<{ deleteAgent: boolean }>(`mutation($id: ID!) { deleteAgent(id: $id) }`, { id }),
  createApiKey: (agentId: string, name: string) =>
    gql<{ createApiKey: { key: string; apiKey: ApiKey } }>(
      `mutation($a: ID!, $n: String!) { createApiKey(agentId: $a, name: $n) { key apiKey { id name prefix last4 lastUsedAt createdAt } } }`,
      { a: agentId, n: name },
    ).then((d) => d.createApiKey),
  deleteApiKey: (id: string) => gql<{ deleteApiKey: boolean }>(`mutation($id: ID!) { deleteApiKey(id: $id) }`, { id }),
  triggers: () => gql<{ triggers: TriggerSummary[] }>(`{ triggers { id agentId description active webhookUrl createdAt agent { id name } } }`).then((d) => d.triggers),
  trigger: (id: string, logs = 20) =>
    gql<{ trigger: Trigger | null }>(
      `query($id: ID!, $n: Int) { trigger(id: $id) { ${TRIGGER_FIELDS} logs(first: $n) { jobId time status durationMs threadId error } } }`,
      { id, n: logs },
    ).then((d) => d.trigger),
  triggerLogs: (id: string, logs = 20) =>
    gql<{ trigger: { logs: LogEntry[] } | null }>(`query($id: ID!, $n: Int) { trigger(id: $id) { logs(first: $n) { jobId time status durationMs threadId error } } }`, {
      id,
      n: logs,
    }).then((d) => d.trigger?.logs ?? []),
  createTrigger: (agentId: string, description: string | null) =>
    gql<{ createTrigger: { trigger: Trigger; secret: string; webhookUrl: string; testCommand: string; signedTestCommand: string } }>(
      `mutation($a: ID!, $d: String) { createTrigger(agentId: $a, description: $d) { trigger { ${TRIGGER_FIELDS} logs { jobId } } secret webhookUrl testCommand signedTestCommand } }`,
      { a: agentId, d: description },
    ).then((d) => d.createTrigger),
  updateTrigger: (id: string, description: string | null) =>
    gql<{ updateTrigger: { id: string; description: string | null } }>(`mutation($id: ID!, $d: String) { updateTrigger(id: $id, description: $d) { id description } }`, {
      id,
      d: description,
    }).then((d) => d.updateTrigger),
  setTriggerActive: (id: string, active: boolean) =>
    gql<{ setTriggerActive: { id: string; active: boolean } }>(`mutation($id: ID!, $a: Boolean!) { setTriggerActive(id: $id, active: $a) { id active } }`, { id, a: active }).then(
      (d) => d.setTriggerActive,
    ),
  setSecretRequired: (id: string, required: boolean) =>
    gql<{ updateTrigger: { id: string; secretRequired: boolean } }>(`mutation($id: ID!, $r: Boolean) { updateTrigger(id: $id, secretRequired: $r) { id secretRequired } }`, {
      id,
      r: required,
    }).then((d) => d.updateTrigger),
  settings: () =>
    gql<{ me: Account & { retentionDays: number; relaxSignatureTimestamp: boolean } }>(`{ me { id name balance retentionDays relaxSignatureTimestamp } }`).then((d) => d.me),
  updateSettings: (input: { retentionDays?: number; relaxSignatureTimestamp?: boolean }) =>
    gql<{ updateAccountSettings: Account & { retentionDays: number; relaxSignatureTimestamp: boolean } }>(
      `mutation($i: AccountSettingsInput!) { updateAccountSettings(input: $i) { id name balance retentionDays relaxSignatureTimestamp } }`,
      { i: input },
    ).then((d) => d.updateAccountSettings),
  setTriggerSecret: (id: string, secret: string) =>
    gql<{ setTriggerSecret: { id: string; secret: string } }>(`mutation($id: ID!, $s: String!) { setTriggerSecret(id: $id, secret: $s) { id secret } }`, { id, s: secret }).then(
      (d) => d.setTriggerSecret,
    ),
  rotateTriggerSecret: (id: string) =>
    gql<{ rotateTriggerSecret: { secret: string; previousSecretExpiresAt: string } }>(
      `mutation($id: ID!) { rotateTriggerSecret(id: $id) { secret previousSecretExpiresAt } }`,
      { id },
    ).then((d) => d.rotateTriggerSecret),
  sendTestWebhook: (triggerId: string, payload: unknown) =>
    gql<{ sendTestWebhook: Job }>(`mutation($t: ID!, $p: JSON!) { sendTestWebhook(triggerId: $t, payload: $p) { ${JOB_FIELDS} } }`, { t: triggerId, p: payload }).then(
      (d) => d.sendTestWebhook,
    ),
  job: (id: string) => gql<{ job: Job | null }>(`query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`, { id }).then((d) => d.job),
  thread: (id: string) =>
    gql<{ thread: Thread | null }>(`query($id: ID!) { thread(id: $id) { id agentId createdAt messages { role content createdAt } } }`, { id }).then((d) => d.thread),
};

/** Follows one job to its end: live over graphql-ws, polling `job(id)` whenever the socket is down. */
export function followJob(jobId: string, onUpdate: (job: Job) => void, onError: (e: Error) => void): () => void {
  let stopped = false;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let inFlight = false;
  const final = (j: Job) => j.status === "DONE" || j.status === "FAILED";
  const stop = () => {
    stopped = true;
    clearTimeout(pollTimer);
    unsubscribe();
    offSocket();
  };
  const refresh = async () => {
    if (stopped || inFlight) return;
    inFlight = true;
    try {
      const job = await api.job(jobId);
      if (stopped || !job) return;
      onUpdate(job);
      if (final(job)) stop();
    } catch (e) {
      if (!stopped) onError(e as Error);
    } finally {
      inFlight = false;
    }
  };
  // Poll fast while the socket is down, slowly (a safety net) while it is up.
  const schedule = () => {
    if (stopped) return;
    pollTimer = setTimeout(
      async () => {
        await refresh();
        schedule();
      },
      isSocketUp() ? 5000 : 1000,
    );
  };
  const unsubscribe = subscribeJobs({ jobId }, () => void refresh(), () => undefined);
  const offSocket = onSocketState((up) => {
    if (up) void refresh(); // catch up on anything missed while connecting
  });
  void refresh();
  schedule();
  return stop;
}
