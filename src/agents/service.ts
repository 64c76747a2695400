import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors/app-error.js";
import { Account, Agent, type IAgent } from "../db/schema.js";
import { newId } from "../infra/ids.js";
import { validatePatterns } from "../egress/allowlist.js";
import { DEFAULT_MODEL, SUPPORTED_MODELS, isSupportedModel } from "../config/models.js";
import type { ScriptValidator } from "../runtime/runtime.js";

export interface AgentFields {
  name?: string;
  instructions?: string | null;
  defaultModel?: string | null;
  allowedModels?: string[] | null;
  fallbackModels?: string[] | null;
  script?: string | null;
  cpuTimeLimitMs?: number | null;
  wallTimeLimitMs?: number | null;
}

const MAX_INSTRUCTIONS = 100_000;

function checkModel(model: string, param: string): void {
  if (!isSupportedModel(model)) {
    throw new AppError("validation_failed", `${param}: unsupported model "${model}"; supported: ${SUPPORTED_MODELS.join(", ")}`, { param });
  }
}

function validate(fields: AgentFields, current?: IAgent): void {
  if (fields.name !== undefined) {
    const name = fields.name.trim();
    if (name.length < 1 || name.length > 200) throw new AppError("validation_failed", "name must be 1 to 200 characters", { param: "name" });
  }
  if (fields.instructions != null && fields.instructions.length > MAX_INSTRUCTIONS) {
    throw new AppError("validation_failed", `instructions must be at most ${MAX_INSTRUCTIONS} characters`, { param: "instructions" });
  }
  // The script's size limit (SCRIPT_MAX_BYTES) is checked by the validator, which has the configuration.
  for (const param of ["cpuTimeLimitMs", "wallTimeLimitMs"] as const) {
    const v = fields[param];
    if (v != null && (!Number.isInteger(v) || v < 10)) throw new AppError("validation_failed", `${param} must be a whole number of milliseconds, at least 10 (null: the operator's default)`, { param });
  }
  if (fields.defaultModel != null) checkModel(fields.defaultModel, "defaultModel");
  if (fields.allowedModels != null) {
    if (fields.allowedModels.length === 0) throw new AppError("validation_failed", "allowedModels: give at least one model, or null for all", { param: "allowedModels" });
    fields.allowedModels.forEach((m) => checkModel(m, "allowedModels"));
  }
  const defaultModel = fields.defaultModel ?? current?.defaultModel ?? DEFAULT_MODEL;
  const allowed = fields.allowedModels !== undefined ? fields.allowedModels : current?.allowedModels;
  if (allowed && !allowed.includes(defaultModel)) {
    throw new AppError("validation_failed", `defaultModel "${defaultModel}" must be one of allowedModels`, { param: "defaultModel" });
  }
  const fallbacks = fields.fallbackModels !== undefined ? fields.fallbackModels : current?.fallbackModels;
  if (fallbacks) {
    if (fallbacks.length > SUPPORTED_MODELS.length) throw new AppError("validation_failed", `fallbackModels: at most ${SUPPORTED_MODELS.length} models`, { param: "fallbackModels" });
    if (new Set(fallbacks).size !== fallbacks.length) throw new AppError("validation_failed", "fallbackModels: each model at most once", { param: "fallbackModels" });
    fallbacks.forEach((m) => checkModel(m, "fallbackModels"));
    const outside = allowed && fallbacks.find((m) => !allowed.includes(m));
    if (outside) throw new AppError("validation_failed", `fallbackModels: "${outside}" is not one of allowedModels`, { param: "fallbackModels" });
  }
}

export async function listAgents(em: EntityManager, accountId: string): Promise<IAgent[]> {
  return em.find(Agent, { account: accountId }, { orderBy: { createdAt: "asc", id: "asc" } });
}

/** A foreign agent id answers exactly like a missing one. */
export async function findAgent(em: EntityManager, accountId: string, id: string): Promise<IAgent | null> {
  return em.findOne(Agent, { id, account: accountId });
}

export async function requireAgent(em: EntityManager, accountId: string, id: string): Promise<IAgent> {
  const agent = await findAgent(em, accountId, id);
  if (!agent) throw new AppError("not_found", `Agent ${id} not found`);
  return agent;
}

export async function createAgent(em: EntityManager, accountId: string, fields: AgentFields & { name: string }, validateScript?: ScriptValidator): Promise<IAgent> {
  validate(fields);
  if (fields.script && validateScript) await validateScript(fields.script);
  const agent = em.create(Agent, {
    id: newId("agt"),
    account: em.getReference(Account, accountId),
    name: fields.name.trim(),
    instructions: fields.instructions ?? "",
    defaultModel: fields.defaultModel ?? DEFAULT_MODEL,
    allowedModels: fields.allowedModels ?? null,
    fallbackModels: fields.fallbackModels?.length ? fields.fallbackModels : null,
    script: fields.script?.trim() ? fields.script : null,
    cpuTimeLimitMs: fields.cpuTimeLimitMs ?? null,
    wallTimeLimitMs: fields.wallTimeLimitMs ?? null,
  });
  await em.flush();
  return agent;
}

export async function updateAgent(em: EntityManager, accountId: string, id: string, fields: AgentFields, validateScript?: ScriptValidator): Promise<IAgent> {
  const agent = await requireAgent(em, accountId, id);
  validate(fields, agent);
  if (fields.script && validateScript) await validateScript(fields.script);
  if (fields.name !== undefined) agent.name = fields.name.trim();
  if (fields.instructions !== undefined) agent.instructions = fields.instructions ?? "";
  if (fields.defaultModel != null) agent.defaultModel = fields.defaultModel;
  if (fields.allowedModels !== undefined) agent.allowedModels = fields.allowedModels;
  if (fields.fallbackModels !== undefined) agent.fallbackModels = fields.fallbackModels?.length ? fields.fallbackModels : null;
  if (fields.script !== undefined) agent.script = fields.script?.trim() ? fields.script : null;
  if (fields.cpuTimeLimitMs !== undefined) agent.cpuTimeLimitMs = fields.cpuTimeLimitMs;
  if (fields.wallTimeLimitMs !== undefined) agent.wallTimeLimitMs = fields.wallTimeLimitMs;
  await em.flush();
  return agent;
}

/** Replaces the hosts `ctx.fetch` may reach (validated patterns; an empty list blocks all egress). */
export async function setAgentEgress(em: EntityManager, accountId: string, id: string, allow: string[]): Promise<IAgent> {
  const agent = await requireAgent(em, accountId, id);
  agent.egressAllow = validatePatterns(allow);
  await em.flush();
  return agent;
}

export async function deleteAgent(em: EntityManager, accountId: string, id: string): Promise<boolean> {
  const deleted = await em.nativeDelete(Agent, { id, account: accountId });
  return deleted > 0;
}
