import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { TRIGGER_CHANGED } from "../triggers/cache.js";
import { createAgent, createTrigger, getJson, gql, postWebhook } from "../../test/helpers/webhooks.js";

/**
 * A leaked trigger secret revoked before its 24-hour grace window ends: it fails at once on the
 * instance that revoked it and, on another instance whose cache holds it, as soon as that
 * instance hears the change (the NOTIFY path of triggers/cache.ts, not the cache's TTL).
 */
describe("revoking previous trigger secrets across two API instances", () => {
  let a: TestApp;
  let b: TestApp;
  let admin: string;
  let agentId: string;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ databaseUrl: a.databaseUrl, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
    admin = (await createAccount(a.url, a.operatorToken, "revoke")).adminToken;
    agentId = await createAgent(a.url, admin, { name: "r", instructions: "x" });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const status = async (app: TestApp, triggerId: string, secret: string) => (await postWebhook(app.url, triggerId, "{}", { "x-trigger-secret": secret })).status;
  /** Resolves once `app` has heard a change of the trigger (its cache, subscribed first, has evicted it by then). */
  const heard = async (app: TestApp, triggerId: string) => {
    let stop: (() => void) | undefined;
    const p = new Promise<void>((resolve) => {
      void app.runtime.events
        .subscribe(TRIGGER_CHANGED, (id) => id === triggerId && resolve())
        .then((s) => (stop = s));
    });
    return { done: p.then(() => stop?.()) };
  };

  it("revokePreviousTriggerSecrets: the rotated-out secret stops at once; the current one keeps working", async () => {
    const t = await createTrigger(a.url, admin, agentId);
    const rotated = (await gql(a.url, admin, `mutation($id: ID!) { rotateTriggerSecret(id: $id) { secret } }`, { id: t.id })).data.rotateTriggerSecret.secret as string;
    // Both instances have cached the trigger with the old secret in its grace window.
    for (const app of [a, b]) expect(await status(app, t.id, t.secret)).toBe(202);
    const first = await postWebhook(a.url, t.id, "{}", { "x-trigger-secret": t.secret });
    const onB = await heard(b, t.id);
    const r = await gql(a.url, admin, `mutation($id: ID!) { revokePreviousTriggerSecrets(id: $id) { id } }`, { id: t.id });
    expect(r.data?.revokePreviousTriggerSecrets).toEqual({ id: t.id });
    expect(await status(a, t.id, t.secret)).toBe(401);
    expect(await status(a, t.id, rotated)).toBe(202);
    await onB.done;
    expect(await status(b, t.id, t.secret)).toBe(401);
    expect(await status(b, t.id, rotated)).toBe(202);
    // The job endpoints no longer take it either.
    for (const app of [a, b]) expect((await getJson(`${app.url}/api/agent-run-jobs/${first.body.job_id}/status`, { "x-trigger-secret": t.secret })).status).toBe(404);
  });

  it("rotateTriggerSecret(revokePrevious: true) and setTriggerSecret(revokePrevious: true) end the previous secret now", async () => {
    const t = await createTrigger(a.url, admin, agentId);
    for (const app of [a, b]) expect(await status(app, t.id, t.secret)).toBe(202);
    let onA = await heard(a, t.id);
    const rotated = await gql(b.url, admin, `mutation($id: ID!) { rotateTriggerSecret(id: $id, revokePrevious: true) { secret previousSecretExpiresAt } }`, { id: t.id });
    const { secret, previousSecretExpiresAt } = rotated.data.rotateTriggerSecret as { secret: string; previousSecretExpiresAt: string };
    expect(Date.parse(previousSecretExpiresAt)).toBeLessThanOrEqual(Date.now());
    expect(await status(b, t.id, t.secret)).toBe(401);
    expect(await status(b, t.id, secret)).toBe(202);
    await onA.done;
    expect(await status(a, t.id, t.secret)).toBe(401);
    expect(await status(a, t.id, secret)).toBe(202);

    const custom = "a-custom-secret-long-enough-1234";
    onA = await heard(a, t.id);
    const set = await gql(b.url, admin, `mutation($id: ID!, $s: String!) { setTriggerSecret(id: $id, secret: $s, revokePrevious: true) { id } }`, { id: t.id, s: custom });
    expect(set.errors).toBeUndefined();
    await onA.done;
    for (const app of [a, b]) {
      expect(await status(app, t.id, secret)).toBe(401);
      expect(await status(app, t.id, custom)).toBe(202);
    }
    // Without the flag, rotation keeps its 24-hour grace window.
    const graceful = (await gql(a.url, admin, `mutation($id: ID!) { rotateTriggerSecret(id: $id) { secret } }`, { id: t.id })).data.rotateTriggerSecret.secret;
    expect(await status(a, t.id, custom)).toBe(202);
    expect(await status(a, t.id, graceful)).toBe(202);
  });

  it("another account's trigger answers NOT_FOUND like an unknown one", async () => {
    const other = (await createAccount(a.url, a.operatorToken, "other")).adminToken;
    const t = await createTrigger(a.url, admin, agentId);
    for (const id of [t.id, "trg_unknown"]) {
      const r = await gql(a.url, other, `mutation($id: ID!) { revokePreviousTriggerSecrets(id: $id) { id } }`, { id });
      expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    }
    expect(await status(a, t.id, t.secret)).toBe(202);
  });
});
