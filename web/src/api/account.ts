import { gql } from "./client";
import type { Account } from "./types";

export const accountApi = {
  me: (token?: string) => gql<{ me: Account }>(`{ me { id name balance } }`, undefined, token).then((d) => d.me),
  settings: () =>
    gql<{ me: Account & { retentionDays: number; relaxSignatureTimestamp: boolean } }>(`{ me { id name balance retentionDays relaxSignatureTimestamp } }`).then((d) => d.me),
  updateSettings: (input: { retentionDays?: number; relaxSignatureTimestamp?: boolean }) =>
    gql<{ updateAccountSettings: Account & { retentionDays: number; relaxSignatureTimestamp: boolean } }>(
      `mutation($i: AccountSettingsInput!) { updateAccountSettings(input: $i) { id name balance retentionDays relaxSignatureTimestamp } }`,
      { i: input },
    ).then((d) => d.updateAccountSettings),
};
