import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";

/** The official A2A JS client over JSON-RPC, for one agent of `baseUrl`, sending `key` as its bearer credential. */
export function a2aJsonRpcClient(baseUrl: string, agentId: string, key: string): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ Authorization: `Bearer ${key}` }), shouldRetryWithHeaders: async () => undefined });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return new ClientFactory(options).createFromUrl(`${baseUrl}/api/a2a/${agentId}/`);
}
