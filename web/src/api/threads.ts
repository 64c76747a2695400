import { gql } from "./client";
import type { Page, Thread, ThreadMessage } from "./types";

export const threadsApi = {
  thread: (id: string) =>
    gql<{ thread: (Thread & { cost: string }) | null }>(`query($id: ID!) { thread(id: $id) { id agentId createdAt cost } }`, { id }).then((d) => d.thread),
  threadMessages: (id: string, first: number, after: string | null) =>
    gql<{ thread: { messages: Page<ThreadMessage> } | null }>(
      `query($id: ID!, $n: Int, $a: String) { thread(id: $id) { messages(first: $n, after: $a) { edges { cursor node { seq role content createdAt } } pageInfo { hasNextPage endCursor } } } }`,
      { id, n: first, a: after },
    ).then((d) => d.thread?.messages ?? { edges: [], pageInfo: { hasNextPage: false, endCursor: null } }),
  agentThreads: (agentId: string, first: number, after: string | null) =>
    gql<{ agent: { threads: Page<Thread> } | null }>(
      `query($id: ID!, $n: Int, $a: String) { agent(id: $id) { threads(first: $n, after: $a) { edges { cursor node { id agentId createdAt } } pageInfo { hasNextPage endCursor } } } }`,
      { id: agentId, n: first, a: after },
    ).then((d) => d.agent?.threads ?? { edges: [], pageInfo: { hasNextPage: false, endCursor: null } }),
};
