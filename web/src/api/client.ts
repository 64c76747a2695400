import { getToken } from "./token";

/** The console talks only to the public GraphQL API (HTTP + graphql-ws), with the admin token. */

export class ApiError extends Error {
  constructor(
    message: string,
    public code?: string,
    public param?: string,
    public status?: number,
  ) {
    super(message);
  }
}

const listeners = new Set<() => void>();
/** Called when the server rejects the token (so the app can go back to sign in). */
export function onUnauthenticated(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Turns a GraphQL error into words a person can act on. */
function explain(e: { message?: string; extensions?: Record<string, unknown> } | undefined, status: number): ApiError {
  const code = e?.extensions?.code as string | undefined;
  const param = e?.extensions?.param as string | undefined;
  if (code === "UNAUTHENTICATED" || status === 401) return new ApiError("The admin token was not accepted. Sign in again with a valid adm_… token.", "UNAUTHENTICATED", undefined, status);
  if (code === "FORBIDDEN") return new ApiError(e?.message || "This token may not do that.", code, param, status);
  if (code === "INTERNAL_SERVER_ERROR") return new ApiError("The server ran into an error. Try again in a moment.", code, param, status);
  if (status === 429) return new ApiError("Too many requests. Wait a moment and try again.", code, param, status);
  return new ApiError(e?.message || `The request failed (HTTP ${status}).`, code, param, status);
}

export async function gql<T>(query: string, variables?: Record<string, unknown>, token = getToken()): Promise<T> {
  let res: Response;
  try {
    res = await fetch("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError("Could not reach the server. Check your connection and that Agent Gateway is running.", "NETWORK");
  }
  let body: { data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The server answered HTTP ${res.status} without a readable body.`, "BAD_RESPONSE", undefined, res.status);
  }
  if (body.errors?.length || !body.data) {
    const err = explain(body.errors?.[0], res.status);
    if (err.code === "UNAUTHENTICATED") listeners.forEach((fn) => fn());
    throw err;
  }
  return body.data;
}
