import { p } from "@mikro-orm/core";
import { Account } from "./accounts.js";
import { Agent } from "./agents.js";

/** The key columns of a row that belongs to an agent of an account, deleted with either. */
export const agentOwned = () => ({
  id: p.string().primary(),
  account: () => p.manyToOne(Account).deleteRule("cascade").index(),
  agent: () => p.manyToOne(Agent).deleteRule("cascade").index(),
});
