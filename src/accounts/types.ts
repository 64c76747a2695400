import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { formatUsd } from "../infra/money.js";
import type { AccountRow } from "./service.js";

@ObjectType("Account", { description: "A tenant: owns agents, keys, triggers, threads, jobs and a balance." })
export class AccountType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "USD as a decimal string with six places, e.g. \"10.000000\"" }) balance!: string;
  @Field(() => Int, { description: "Days webhook payloads are kept in audit entries" }) retentionDays!: number;
  @Field(() => Boolean, { description: "Accept X-Service-Signature without X-Service-Timestamp" }) relaxSignatureTimestamp!: boolean;
  @Field(() => Date) createdAt!: Date;

  static from(row: AccountRow): AccountType {
    return Object.assign(new AccountType(), {
      id: row.id,
      name: row.name,
      balance: formatUsd(row.balanceMicros),
      retentionDays: row.retentionDays,
      relaxSignatureTimestamp: row.relaxSignatureTimestamp,
      createdAt: row.createdAt,
    });
  }
}

@ObjectType("CreatedAccount")
export class CreatedAccountType {
  @Field(() => AccountType) account!: AccountType;
  @Field(() => String, { description: "The account's first admin token. Shown only here." }) adminToken!: string;
}

@InputType("AccountSettingsInput")
export class AccountSettingsInput {
  @Field(() => Int, { nullable: true }) retentionDays?: number | null;
  @Field(() => Boolean, { nullable: true }) relaxSignatureTimestamp?: boolean | null;
}

@ObjectType("AdminToken", { description: "An account admin token; the token itself is shown only when created" })
export class AdminTokenType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The first characters, to recognise it" }) prefix!: string;
  @Field(() => Date, { nullable: true, description: "Updated at most about once a minute" }) lastUsedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType("CreatedAdminToken")
export class CreatedAdminTokenType {
  @Field(() => String, { description: "The full token (adm_…). Shown only here." }) token!: string;
  @Field(() => AdminTokenType) adminToken!: AdminTokenType;
}
