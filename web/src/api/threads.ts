import { gql } from "./client";
import type { Thread } from "./types";

export const threadsApi = {
  thread: (id: string) =>
    gql<{ thread: Thread | null }>(`query($id: ID!) { thread(id: $id) { id agentId createdAt messages { role content createdAt } } }`, { id }).then((d) => d.thread),
};
