import { gql } from "./client";
import type { AdminToken } from "./types";

const FIELDS = "id name prefix lastUsedAt createdAt";

export const adminTokensApi = {
  adminTokens: () => gql<{ adminTokens: AdminToken[] }>(`{ adminTokens { ${FIELDS} } }`).then((d) => d.adminTokens),
  createAdminToken: (name: string) =>
    gql<{ createAdminToken: { token: string; adminToken: AdminToken } }>(`mutation($n: String!) { createAdminToken(name: $n) { token adminToken { ${FIELDS} } } }`, { n: name }).then(
      (d) => d.createAdminToken,
    ),
  revokeAdminToken: (id: string) => gql<{ revokeAdminToken: boolean }>(`mutation($id: ID!) { revokeAdminToken(id: $id) }`, { id }),
};
