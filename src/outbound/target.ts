import { isIP } from "node:net";
import type { Config } from "../config/config.js";
import { createConnector, EgressError } from "../egress/connect.js";
import { AppError } from "../errors/app-error.js";

const MAX_URL_CHARS = 2048;

/**
 * A callback URL as its owner saves it: an absolute https:// URL (http:// to loopback only under
 * EGRESS_ALLOW_PRIVATE), without credentials, whose host is not an address the egress rules
 * refuse. A host name is checked again on every attempt, after DNS (connector). `param` names the
 * field in the error (GraphQL BAD_USER_INPUT).
 */
export function validateCallbackUrl(raw: string, egress: Config["egress"], param = "callbackUrl"): string {
  const bad = (why: string) => new AppError("validation_failed", `${param}: ${why}`, { param });
  const text = raw.trim();
  if (text.length > MAX_URL_CHARS) throw bad(`at most ${MAX_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("must be an absolute URL, e.g. https://example.com/hooks/agent");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && egress.allowPrivate)) throw bad("must be an https:// URL");
  if (url.username || url.password) throw bad("must not carry credentials (user:password@)");
  if (url.hash) throw bad("must not have a #fragment");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) {
    try {
      createConnector(egress).check(host, host, url.protocol === "http:", param);
    } catch (err) {
      if (err instanceof EgressError) throw bad(err.message.replace(`${param} refused: `, "refused: "));
      throw err;
    }
  } else if (url.protocol === "http:" && host !== "localhost") {
    throw bad("http:// is allowed only to loopback (development)");
  }
  return url.toString();
}
