import { Arg, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Resolver, Root } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { getJob } from "../jobs/store.js";
import { JobStatusEnum, JobType } from "../jobs/types.js";
import { answerJobInput } from "./answer.js";
import { MAX_SCHEMA_BYTES } from "./schema.js";
import { weighs } from "../graphql/cost.js";
import { pendingRequestsOfJobs } from "./store.js";

@ObjectType("InputRequest", { description: "The question a run waits on (its script called ctx.ask): answer it with answerJobInput" })
export class InputRequestType {
  @Field(() => ID) id!: string;
  @Field(() => String) prompt!: string;
  @weighs(MAX_SCHEMA_BYTES)
  @Field(() => GraphQLJSON, { nullable: true, description: "JSON Schema (an object schema) the answer must match; null: any JSON value" })
  schema!: unknown;
  @Field(() => Date, { description: "When the question times out (the script's ctx.ask then throws input_timeout)" }) expiresAt!: Date;
}

@Resolver(() => JobType)
export class InputRequestResolver {
  @FieldResolver(() => InputRequestType, { nullable: true, description: "While INPUT_REQUIRED: the question the run waits on; null otherwise" })
  async inputRequest(@Root() job: JobType, @Ctx() ctx: GraphQLContext): Promise<InputRequestType | null> {
    if (job.status !== JobStatusEnum.INPUT_REQUIRED) return null;
    const [row] = await pendingRequestsOfJobs(ctx.runtime.pool, [job.id]);
    if (!row) return null;
    return Object.assign(new InputRequestType(), { id: row.id, prompt: row.prompt, schema: row.schema ?? null, expiresAt: new Date(row.expiresAt) });
  }

  @Mutation(() => JobType, {
    description:
      "Answers the question an INPUT_REQUIRED job waits on; the run goes on from its ctx.ask. The value must match the request's schema (BAD_USER_INPUT names what failed; the run keeps waiting); a question already answered is a CONFLICT",
  })
  async answerJobInput(@Arg("jobId", () => ID) jobId: string, @Arg("value", () => GraphQLJSON) value: unknown, @Ctx() ctx: GraphQLContext): Promise<JobType> {
    const accountId = accountOf(ctx);
    await answerJobInput(ctx.runtime, accountId, jobId, value);
    const job = await getJob(ctx.runtime.pool, jobId);
    if (!job || job.accountId !== accountId) throw new AppError("not_found", `Job ${jobId} not found`, { param: "jobId" });
    return JobType.from(job);
  }
}
