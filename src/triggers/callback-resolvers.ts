import { Arg, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Resolver, Root } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { randomBase62 } from "../infra/ids.js";
import { DELIVERY_DISPATCH, Dispatcher } from "../jobs/dispatcher.js";
import { getJob } from "../jobs/store.js";
import type { Runtime } from "../runtime/runtime.js";
import { deliveryLog, insertRedelivery, insertTestDelivery, jobDeliveryLog, type DeliveryLogRow } from "../outbound/store.js";
import { currentSecret, requireTrigger, rotateCallbackSecret } from "./service.js";
import { JobType, RotatedTriggerSecretType, TriggerType } from "./types.js";

@ObjectType("Delivery", { description: "One attempt to deliver an outbound event (a completion callback, a test event)" })
export class DeliveryType {
  @Field(() => ID, { description: "The delivery cycle (a redelivery is a new one)" }) deliveryId!: string;
  @Field(() => String, { description: "The webhook-id header: the same on every attempt and every redelivery of the event" }) webhookId!: string;
  @Field(() => Int, { description: "1, 2, … within its delivery cycle" }) attempt!: number;
  @Field(() => Date) at!: Date;
  @Field(() => String) url!: string;
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when there was no answer" }) statusCode!: number | null;
  @Field(() => Int) durationMs!: number;
  @Field(() => String, { nullable: true, description: "Why the attempt failed (not 2xx, timeout, refused by the egress rules); null on success" }) error!: string | null;
  @Field(() => Int, { description: "Response body bytes read (the read stops at OUTBOUND_MAX_RESPONSE_BYTES)" }) responseBytes!: number;
  @Field(() => String, { nullable: true, description: "The start of the response body" }) response!: string | null;
  @Field(() => String, { description: "PENDING (more attempts to come), DELIVERED or FAILED: the state of the attempt's delivery cycle" }) deliveryStatus!: string;

  static from(r: DeliveryLogRow): DeliveryType {
    return Object.assign(new DeliveryType(), {
      deliveryId: r.deliveryId,
      webhookId: r.webhookId,
      attempt: r.attempt,
      at: r.at,
      url: r.url,
      statusCode: r.statusCode,
      durationMs: r.durationMs,
      error: r.error,
      responseBytes: r.responseBytes,
      response: r.responseExcerpt,
      deliveryStatus: r.deliveryStatus.toUpperCase(),
    });
  }
}

@ObjectType("TestCallback", { description: "A test event sent to a trigger's callbackUrl" })
export class TestCallbackType {
  @Field(() => String) webhookId!: string;
  @Field(() => ID) deliveryId!: string;
  @Field(() => [DeliveryType], { description: "The attempts made within a few seconds (usually the first); later ones continue on the retry schedule" })
  attempts!: DeliveryType[];
}

/** Starts a delivery's workflow at once; when that fails, a worker's delivery sweep starts it. */
async function startDelivery(runtime: Runtime, deliveryId: string): Promise<void> {
  await new Dispatcher(runtime, {}, DELIVERY_DISPATCH).startWorkflow(deliveryId).catch((err) => runtime.log.warn({ err: String(err), deliveryId }, "delivery start deferred to the sweep"));
}

const TEST_WAIT_MS = 10_000;

@Resolver(() => TriggerType)
export class TriggerCallbackResolver {
  @FieldResolver(() => String, { nullable: true, description: "The current callback-signing secret (whsec_…), to copy into the receiver's Standard Webhooks verifier" })
  async callbackSecret(@Root() trigger: TriggerType, @Ctx() ctx: GraphQLContext): Promise<string | null> {
    return currentSecret(ctx.runtime, trigger.id, "trigger_callback_secrets");
  }

  @Mutation(() => RotatedTriggerSecretType, { description: "Issues a new callback-signing secret; callbacks carry signatures by both for 24 hours" })
  async rotateCallbackSecret(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<RotatedTriggerSecretType> {
    return Object.assign(new RotatedTriggerSecretType(), await rotateCallbackSecret(ctx.runtime, accountOf(ctx), id));
  }

  @Mutation(() => TestCallbackType, {
    description: "POSTs a signed `test` event to the trigger's callbackUrl and answers with the first attempt; RATE_LIMITED while OUTBOUND_MAX_PENDING_RESENDS test events of the trigger are pending",
  })
  async sendTestCallback(@Arg("triggerId", () => ID) triggerId: string, @Ctx() ctx: GraphQLContext): Promise<TestCallbackType> {
    const accountId = accountOf(ctx);
    const trigger = await requireTrigger(ctx.runtime.pool, accountId, triggerId);
    if (!trigger.callbackUrl) {
      throw new AppError("validation_failed", `Trigger ${triggerId} has no callbackUrl: set one with updateTrigger first`, { param: "triggerId" });
    }
    const webhookId = `msg_test_${randomBase62(16)}`;
    const payload = { type: "test", timestamp: new Date().toISOString(), data: { trigger_id: triggerId, message: "A test event from Agent Gateway" } };
    const deliveryId = await insertTestDelivery(ctx.runtime.pool, accountId, triggerId, webhookId, payload, ctx.runtime.config.outbound.maxPendingResends);
    await startDelivery(ctx.runtime, deliveryId);
    const deadline = Date.now() + TEST_WAIT_MS;
    let attempts = await deliveryLog(ctx.runtime.pool, accountId, deliveryId);
    while (attempts.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      attempts = await deliveryLog(ctx.runtime.pool, accountId, deliveryId);
    }
    return Object.assign(new TestCallbackType(), { webhookId, deliveryId, attempts: attempts.map(DeliveryType.from) });
  }
}

@Resolver(() => JobType)
export class JobDeliveriesResolver {
  @FieldResolver(() => [DeliveryType], { description: "Every attempt to deliver the job's completion callback, oldest first" })
  async deliveries(@Root() job: JobType, @Ctx() ctx: GraphQLContext): Promise<DeliveryType[]> {
    return (await jobDeliveryLog(ctx.runtime.pool, accountOf(ctx), job.id)).map(DeliveryType.from);
  }

  @Mutation(() => JobType, {
    description:
      "Sends a finished job's completion event again, as a new delivery cycle with the same webhook-id and body (receivers deduplicate on it), to the trigger's current callbackUrl. BAD_USER_INPUT once the retention policy purged the job's result; RATE_LIMITED while OUTBOUND_MAX_PENDING_RESENDS cycles of the event are pending",
  })
  async redeliver(@Arg("jobId", () => ID) jobId: string, @Ctx() ctx: GraphQLContext): Promise<JobType> {
    const accountId = accountOf(ctx);
    const deliveryId = await insertRedelivery(ctx.runtime.pool, accountId, jobId, ctx.runtime.config.outbound.maxPendingResends);
    await startDelivery(ctx.runtime, deliveryId);
    return JobType.from((await getJob(ctx.runtime.pool, jobId))!);
  }
}
