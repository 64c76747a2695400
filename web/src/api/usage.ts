import { gql } from "./client";
import type { LedgerEntry, Page, UsageDimension, UsageRow } from "./types";

export const usageApi = {
  usage: (from: string, to: string, groupBy: UsageDimension[]) =>
    gql<{ usage: UsageRow[] }>(
      `query($f: DateTimeISO!, $t: DateTimeISO!, $g: [UsageDimension!]!) { usage(from: $f, to: $t, groupBy: $g) { agentId apiKeyId threadId triggerId model day cost requests inputTokens outputTokens } }`,
      { f: from, t: to, g: groupBy },
    ).then((d) => d.usage),
  ledger: (first: number, after: string | null) =>
    gql<{ ledger: Page<LedgerEntry> }>(
      `query($n: Int, $a: String) { ledger(first: $n, after: $a) { edges { cursor node { id amount kind reference agentId threadId jobId model createdAt } } pageInfo { hasNextPage endCursor } } }`,
      { n: first, a: after },
    ).then((d) => d.ledger),
};
