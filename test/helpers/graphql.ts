export interface GraphQLResponse<T = Record<string, any>> {
  status: number;
  data: T | null | undefined;
  errors: { message: string; extensions?: Record<string, unknown>; path?: string[] }[] | undefined;
}

/** POSTs a GraphQL operation the way any HTTP client would. */
export async function gql<T = Record<string, any>>(
  baseUrl: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: GraphQLResponse["errors"] };
  return { status: res.status, data: body.data, errors: body.errors };
}

/** Creates an account through the operator API and returns its id and admin token. */
export async function createAccount(baseUrl: string, operatorToken: string, name = "acme", initialBalance = "10"): Promise<{ accountId: string; adminToken: string }> {
  const r = await gql<{ createAccount: { account: { id: string }; adminToken: string } }>(
    baseUrl,
    operatorToken,
    `mutation($name: String!, $b: String) { createAccount(name: $name, initialBalance: $b) { account { id } adminToken } }`,
    { name, b: initialBalance },
  );
  if (!r.data) throw new Error(`createAccount failed: ${JSON.stringify(r.errors)}`);
  return { accountId: r.data.createAccount.account.id, adminToken: r.data.createAccount.adminToken };
}
