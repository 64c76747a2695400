import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import type { IAgent } from "../db/schema.js";
import { weighs } from "../graphql/cost.js";

export enum AgentKind {
  CHAT = "CHAT",
  AUTOMATION = "AUTOMATION",
}
registerEnumType(AgentKind, { name: "AgentKind", description: "AUTOMATION agents have a script; CHAT agents answer with their model" });

@ObjectType("Agent")
export class AgentType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "System prompt sent first in every thread" }) instructions!: string;
  @Field(() => String) defaultModel!: string;
  @Field(() => [String], { nullable: true, description: "Models keys of this agent may use; null means all supported" })
  allowedModels!: string[] | null;
  @Field(() => [String], { description: "Tried in order when the chosen model's upstream fails before answering (after its retries); empty: none" })
  fallbackModels!: string[];
  @Field(() => AgentKind) kind!: AgentKind;
  @weighs((c) => c.sandbox.maxScriptBytes)
  @Field(() => String, { nullable: true, description: "JavaScript: export default async function run(input, ctx)" })
  script!: string | null;
  @Field(() => [String], { description: "Hosts ctx.fetch may reach (api.example.com, *.example.com); set with setAgentEgress" }) egressAllow!: string[];
  @Field(() => Int, { nullable: true, description: "CPU time of one run in ms; null: the operator's default. Capped by SCRIPT_CPU_TIME_MS" })
  cpuTimeLimitMs!: number | null;
  @Field(() => Int, { nullable: true, description: "Wall time of one run attempt in ms; null: the operator's default. Capped by SCRIPT_WALL_TIME_MS" })
  wallTimeLimitMs!: number | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;

  static from(agent: IAgent): AgentType {
    return Object.assign(new AgentType(), {
      id: agent.id,
      name: agent.name,
      instructions: agent.instructions,
      defaultModel: agent.defaultModel,
      allowedModels: agent.allowedModels ?? null,
      fallbackModels: agent.fallbackModels ?? [],
      kind: agent.script ? AgentKind.AUTOMATION : AgentKind.CHAT,
      script: agent.script ?? null,
      egressAllow: agent.egressAllow ?? [],
      cpuTimeLimitMs: agent.cpuTimeLimitMs ?? null,
      wallTimeLimitMs: agent.wallTimeLimitMs ?? null,
      createdAt: agent.createdAt,
      updatedAt: agent.updatedAt,
    });
  }
}

/** Run limits an agent may set for itself, below the operator's maximum (null: the default). */
@InputType("AgentRunLimitsInput")
abstract class AgentRunLimitsInput {
  @Field(() => Int, { nullable: true, description: "CPU time of one run in ms (at most SCRIPT_CPU_TIME_MS)" }) cpuTimeLimitMs?: number | null;
  @Field(() => Int, { nullable: true, description: "Wall time of one run attempt in ms (at most SCRIPT_WALL_TIME_MS)" }) wallTimeLimitMs?: number | null;
}

@InputType("CreateAgentInput")
export class CreateAgentInput extends AgentRunLimitsInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) instructions?: string | null;
  @Field(() => String, { nullable: true, description: "Defaults to provider_a/model-2.5-flash" }) defaultModel?: string | null;
  @Field(() => String, { nullable: true }) script?: string | null;
  @Field(() => [String], { nullable: true }) allowedModels?: string[] | null;
  @Field(() => [String], { nullable: true, description: "Models tried in order when the chosen one's upstream fails before answering" }) fallbackModels?: string[] | null;
}

@InputType("UpdateAgentInput", { description: "Omitted fields stay as they are; null clears script and allowedModels" })
export class UpdateAgentInput extends AgentRunLimitsInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) instructions?: string | null;
  @Field(() => String, { nullable: true }) defaultModel?: string | null;
  @Field(() => String, { nullable: true }) script?: string | null;
  @Field(() => [String], { nullable: true }) allowedModels?: string[] | null;
  @Field(() => [String], { nullable: true, description: "null or [] clears" }) fallbackModels?: string[] | null;
}
