import { Arg, Ctx, ID, Mutation, Resolver } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { getJob } from "../jobs/store.js";
import { requireTrigger } from "../triggers/service.js";
import { JobType } from "../triggers/types.js";
import { acceptWebhook } from "./accept.js";
import { checkJsonDepth, MAX_BODY_BYTES } from "./body.js";

/** `sendTestWebhook`: a payload from the console through the same ingest path as a real webhook. */
@Resolver()
export class TestWebhookResolver {
  @Mutation(() => JobType, { description: "Sends a payload through the same path as a real webhook" })
  async sendTestWebhook(
    @Arg("triggerId", () => ID) triggerId: string,
    @Arg("payload", () => GraphQLJSON) payload: unknown,
    @Ctx() ctx: GraphQLContext,
  ): Promise<JobType> {
    const trigger = await requireTrigger(ctx.runtime.pool, accountOf(ctx), triggerId);
    if (!trigger.active) throw new AppError("trigger_inactive", "This trigger is inactive");
    let text: string;
    try {
      text = JSON.stringify(payload ?? null);
    } catch {
      throw new AppError("invalid_json", "payload cannot be serialized as JSON (nested too deeply)", { param: "payload" });
    }
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new AppError("payload_too_large", `Payload exceeds ${MAX_BODY_BYTES} bytes`);
    checkJsonDepth(text);
    const { jobId } = await acceptWebhook(ctx.runtime, trigger, text, null);
    return JobType.from((await getJob(ctx.runtime.pool, jobId))!);
  }
}
