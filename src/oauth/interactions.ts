import express, { type Request, type Response } from "express";
import type Provider from "oidc-provider";
import { resolveAdminToken } from "../accounts/admin-tokens.js";
import type { Runtime } from "../runtime/runtime.js";
import { AgentGone, createOAuthKey } from "./keys.js";
import { renderConsent, renderErrorPage, renderLogin } from "./pages.js";
import { INTERACTION_PATH } from "./provider.js";
import { agentOfResource, OAUTH_SCOPE } from "./resources.js";

/**
 * The pages of an authorization request (docs/design/oauth.md): sign in with the account's admin token,
 * then Allow or Deny. Allow saves a grant and the agent key it is (keys.ts); Deny returns
 * `error=access_denied` to the client. The agent is the one the request's `resource` names, and
 * must be an agent of the signed-in account.
 */
interface AgentRow {
  name: string;
  account_id: string;
  account_name: string;
}

async function agentOf(runtime: Runtime, agentId: string): Promise<AgentRow | undefined> {
  const { rows } = await runtime.pool.query<AgentRow>(
    "select a.name, a.account_id, acc.name as account_name from agents a join accounts acc on acc.id = a.account_id where a.id = $1",
    [agentId],
  );
  return rows[0];
}

const NO_SUCH_AGENT = "This account has no such agent: sign in with the admin token of the account that owns it";

export function interactionRoutes(runtime: Runtime, provider: () => Provider): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 });
  const html = (res: Response, status: number, body: string) => {
    res.status(status).set({ "cache-control": "no-store", "x-frame-options": "DENY", "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", "referrer-policy": "no-referrer" }).type("html").send(body);
  };

  /** The request's details; undefined (a page has been sent) when the interaction is unknown or over. */
  const details = async (req: Request, res: Response) => {
    try {
      const d = await provider().interactionDetails(req, res);
      if (d.uid !== req.params.uid) throw new Error("uid mismatch");
      const resource = [d.params.resource].flat()[0];
      const agentId = typeof resource === "string" ? agentOfResource(runtime.config.publicBaseUrl, resource) : undefined;
      const client = await provider().Client.find(String(d.params.client_id));
      const redirect = URL.parse(String(d.params.redirect_uri ?? ""));
      const clientName = String(client?.clientName ?? redirect?.host ?? d.params.client_id).slice(0, 200);
      return { d, agentId, resource: resource as string, clientName, redirectHost: redirect?.host ?? "", clientId: String(d.params.client_id) };
    } catch {
      html(res, 400, renderErrorPage("invalid_request", "This sign-in has expired or is not yours; start again from the application"));
      return undefined;
    }
  };

  const base = (uid: string) => `${INTERACTION_PATH}/${encodeURIComponent(uid)}`;

  const consentPage = async (res: Response, i: NonNullable<Awaited<ReturnType<typeof details>>>, uid: string) => {
    const agent = i.agentId ? await agentOf(runtime, i.agentId) : undefined;
    if (!agent || agent.account_id !== i.d.session?.accountId) return html(res, 403, renderLogin({ action: `${base(uid)}/login`, clientName: i.clientName, agentId: i.agentId ?? "", error: NO_SUCH_AGENT }));
    html(res, 200, renderConsent({ confirm: `${base(uid)}/confirm`, abort: `${base(uid)}/abort`, clientName: i.clientName, clientId: i.clientId, redirectHost: i.redirectHost, agentName: agent.name, agentId: i.agentId!, accountName: agent.account_name }));
  };

  router.get(`${INTERACTION_PATH}/:uid`, async (req, res) => {
    const i = await details(req, res);
    if (!i) return;
    if (i.d.prompt.name === "login" || !i.d.session?.accountId) return html(res, 200, renderLogin({ action: `${base(req.params.uid)}/login`, clientName: i.clientName, agentId: i.agentId ?? "" }));
    await consentPage(res, i, req.params.uid);
  });

  router.post(`${INTERACTION_PATH}/:uid/login`, form, async (req, res) => {
    const i = await details(req, res);
    if (!i) return;
    const token = typeof req.body?.admin_token === "string" ? req.body.admin_token.trim() : "";
    const admin = token.startsWith("adm_") && token.length <= 200 ? await resolveAdminToken(runtime.pool, token) : undefined;
    const again = (error: string, status: number) => html(res, status, renderLogin({ action: `${base(req.params.uid)}/login`, clientName: i.clientName, agentId: i.agentId ?? "", error }));
    if (!admin) return again("That is not an admin token of any account (adm_…); the console's Admin tokens page creates one", 401);
    const agent = i.agentId ? await agentOf(runtime, i.agentId) : undefined;
    if (!agent || agent.account_id !== admin.accountId) return again(NO_SUCH_AGENT, 403);
    await provider().interactionFinished(req, res, { login: { accountId: admin.accountId } }, { mergeWithLastSubmission: false });
  });

  router.post(`${INTERACTION_PATH}/:uid/confirm`, async (req, res) => {
    const i = await details(req, res);
    if (!i) return;
    const accountId = i.d.session?.accountId;
    const agent = i.agentId ? await agentOf(runtime, i.agentId) : undefined;
    if (i.d.prompt.name !== "consent" || !accountId || !agent || agent.account_id !== accountId) return consentPage(res, i, req.params.uid);
    const grant = new (provider().Grant)({ accountId, clientId: i.clientId });
    const missingOidc = (i.d.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
    if (missingOidc.length) grant.addOIDCScope(missingOidc.join(" "));
    grant.addResourceScope(i.resource, OAUTH_SCOPE);
    const grantId = await grant.save();
    try {
      await createOAuthKey(runtime, { accountId, agentId: i.agentId!, grantId, clientId: i.clientId, clientName: i.clientName });
    } catch (err) {
      if (!(err instanceof AgentGone)) throw err;
      await grant.destroy();
      return html(res, 409, renderErrorPage("invalid_request", "The agent was deleted while you were signing in; start again from the application"));
    }
    await provider().interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  router.post(`${INTERACTION_PATH}/:uid/abort`, async (req, res) => {
    const i = await details(req, res);
    if (!i) return;
    await provider().interactionFinished(req, res, { error: "access_denied", error_description: "The user denied the request" }, { mergeWithLastSubmission: false });
  });

  return router;
}
