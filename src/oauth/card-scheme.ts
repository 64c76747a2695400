import { OAUTH_ROUTES } from "./provider.js";
import { OAUTH_SCOPE } from "./resources.js";

/**
 * The `oauth2` security scheme of an agent's A2A card (docs/design/oauth.md): the authorization code flow
 * with PKCE on this server, in each card version's shape. A2A clients that sign in send the
 * access token as a bearer token, like a key.
 */
const DESCRIPTION = "Sign in with OAuth 2.1 (authorization code + PKCE S256; resource = this agent's A2A URL)";
const SCOPES = { [OAUTH_SCOPE]: "Use this agent as its keys may" };

/** v1.0 (protobuf JSON) shape. */
export function oauth2SchemeV1(publicBaseUrl: string) {
  return {
    oauth2SecurityScheme: {
      description: DESCRIPTION,
      oauth2MetadataUrl: `${publicBaseUrl}/.well-known/oauth-authorization-server`,
      flows: {
        authorizationCode: {
          authorizationUrl: publicBaseUrl + OAUTH_ROUTES.authorization,
          tokenUrl: publicBaseUrl + OAUTH_ROUTES.token,
          refreshUrl: publicBaseUrl + OAUTH_ROUTES.token,
          scopes: SCOPES,
          pkceRequired: true,
        },
      },
    },
  };
}

/** v0.3 (OpenAPI-like) shape. */
export function oauth2SchemeV03(publicBaseUrl: string) {
  return {
    type: "oauth2",
    description: DESCRIPTION,
    oauth2MetadataUrl: `${publicBaseUrl}/.well-known/oauth-authorization-server`,
    flows: { authorizationCode: { authorizationUrl: publicBaseUrl + OAUTH_ROUTES.authorization, tokenUrl: publicBaseUrl + OAUTH_ROUTES.token, refreshUrl: publicBaseUrl + OAUTH_ROUTES.token, scopes: SCOPES } },
  };
}
