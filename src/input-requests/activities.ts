import type { Runtime } from "../runtime/runtime.js";
import type { InputState } from "../../workflows/contract.js";
import { expireRequest, inputState } from "./store.js";

/** The agentRun workflow's activities for a run waiting on ctx.ask (local activities: one short statement each). */
export function createInputActivities(runtime: Runtime) {
  return {
    /** Where the question stands (the workflow's check for an answer whose signal was lost). */
    async inputState(requestId: string): Promise<InputState> {
      return inputState(runtime.pool, requestId);
    },
    /** At its expiry: times the question out (and queues the job again) unless it was answered first. */
    async expireInput(requestId: string): Promise<InputState> {
      return expireRequest(runtime.pool, requestId);
    },
  };
}

export type InputActivities = ReturnType<typeof createInputActivities>;
