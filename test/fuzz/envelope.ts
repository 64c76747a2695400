/**
 * What every answer of the service may look like, whatever was sent: never a 5xx, never a stack
 * trace, and errors in the documented shapes (docs/reference/errors.md):
 * - under /api/v1: the OpenAI envelope {"error":{"message","type","code","param"}};
 * - elsewhere: {"error":{"code","message"}};
 * - GraphQL: {"errors":[{"message","extensions":{"code"}}]} (never INTERNAL_SERVER_ERROR), or the
 *   REST envelope when the HTTP body itself is refused.
 */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const STACK = /\n\s+at [^\n]*[(/\\][^\n]*:\d+:\d+|node_modules\/|\/src\/[a-z-]+\/[a-z-]+\.ts/;

/**
 * An A2A JSON-RPC answer (POST /api/a2a/<agent>): a JSON-RPC response with a result or an error
 * with a numeric code and a message, or an SSE stream of such responses; never a 5xx.
 */
export function jsonRpcProblemsOf(a: Answer): string[] {
  const p: string[] = [];
  if (a.status >= 500) p.push(`status ${a.status}`);
  if (STACK.test(a.body)) p.push("a stack trace or source path in the body");
  const bodies = /event-stream/.test(a.contentType) ? a.body.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)) : [a.body];
  if (bodies.length === 0) p.push("an empty event stream");
  for (const text of bodies) {
    let r: any;
    try {
      r = JSON.parse(text);
    } catch {
      p.push(`not JSON: ${text.slice(0, 100)}`);
      continue;
    }
    if (r?.jsonrpc !== "2.0") p.push("not a JSON-RPC 2.0 response");
    if ("error" in (r ?? {})) {
      if (typeof r.error?.code !== "number" || typeof r.error?.message !== "string") p.push("JSON-RPC error without a numeric code and a message");
      if (r.error?.code === -32603) p.push(`JSON-RPC internal error: ${r.error.message}`);
    } else if (!("result" in (r ?? {}))) p.push("JSON-RPC response without result or error");
  }
  return p;
}

export function problemsOf(path: string, a: Answer): string[] {
  const p: string[] = [];
  if (a.status >= 500) p.push(`status ${a.status}`);
  if (STACK.test(a.body)) p.push("a stack trace or source path in the body");
  if (a.status < 400 && !(path.startsWith("/graphql") && a.status === 200)) return p;
  if (!/json/.test(a.contentType)) {
    if (a.body.length > 0) p.push(`error body is ${a.contentType || "untyped"}, not JSON`);
    return p;
  }
  let parsed: any;
  try {
    parsed = JSON.parse(a.body);
  } catch {
    p.push("error body is not JSON");
    return p;
  }
  if (path.startsWith("/graphql") && Array.isArray(parsed?.errors)) {
    for (const e of parsed.errors) {
      if (typeof e?.message !== "string") p.push("GraphQL error without a message");
      const code = e?.extensions?.code;
      if (typeof code !== "string") p.push("GraphQL error without extensions.code");
      if (code === "INTERNAL_SERVER_ERROR") p.push(`GraphQL INTERNAL_SERVER_ERROR: ${e.message}`);
    }
    return p;
  }
  if (path.startsWith("/graphql") && a.status === 200) return p;
  const err = parsed?.error;
  if (!err || typeof err !== "object") {
    p.push("error body has no error object");
    return p;
  }
  if (typeof err.message !== "string") p.push("error.message is not a string");
  if (path.startsWith("/api/v1")) {
    if (typeof err.type !== "string") p.push("error.type is not a string (OpenAI envelope)");
    if (!("code" in err) || !("param" in err)) p.push("error.code / error.param missing (OpenAI envelope)");
  } else if (typeof err.code !== "string") {
    p.push("error.code is not a string");
  }
  return p;
}

export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: await res.text() };
}
