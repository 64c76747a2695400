import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { formatUsd } from "../infra/money.js";
import type { ApiKeyRow } from "./service.js";

export enum SpendLimitPeriod {
  DAY = "DAY",
  MONTH = "MONTH",
  TOTAL = "TOTAL",
}
registerEnumType(SpendLimitPeriod, { name: "SpendLimitPeriod", description: "What a key's spend limit counts: the current UTC day, the current UTC month, or everything" });

export enum ApiKeyKind {
  SECRET = "SECRET",
  OAUTH = "OAUTH",
}
registerEnumType(ApiKeyKind, { name: "ApiKeyKind", description: "SECRET: an a2a_ key; OAUTH: a consent given to an OAuth client (its access tokens act as this key)" });

@ObjectType("ApiKey", { description: "An agent's key (kind SECRET, shown only once, at creation) or an OAuth client's consent (kind OAUTH); deleting either revokes it everywhere at once." })
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The first 8 characters of the key, for recognising it" }) prefix!: string;
  @Field(() => String, { description: "The last 4 characters of the key" }) last4!: string;
  @Field(() => Int, { nullable: true, description: "Requests per minute; null means the account default" }) rateLimitPerMinute!: number | null;
  @Field(() => Date, { nullable: true, description: "From then on the key answers 401 invalid_api_key; null: never expires" }) expiresAt!: Date | null;
  @Field(() => String, { nullable: true, description: "USD the key may spend per spendLimitPeriod (402 key_spend_limit_exceeded beyond); null: no limit" })
  spendLimit!: string | null;
  @Field(() => SpendLimitPeriod, { nullable: true }) spendLimitPeriod!: SpendLimitPeriod | null;
  @Field(() => String, { nullable: true, description: "USD held or spent in the current period (open calls count at their worst case); null without a spend limit" })
  spent!: string | null;
  @Field(() => Date, { nullable: true, description: "Updated at most about once a minute" }) lastUsedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => ApiKeyKind) kind!: ApiKeyKind;
  @Field(() => String, { nullable: true, description: "OAUTH: the client's name (its client_name, or its redirect host)" }) clientName!: string | null;
  @Field(() => String, { nullable: true, description: "OAUTH: the client's client_id (a registered id or a metadata document URL)" }) clientId!: string | null;

  static from(row: ApiKeyRow): ApiKeyType {
    const { spendLimitMicros, spentMicros, spendLimitPeriod, ...rest } = row;
    return Object.assign(new ApiKeyType(), rest, {
      spendLimit: spendLimitMicros === null ? null : formatUsd(spendLimitMicros),
      spendLimitPeriod: spendLimitMicros === null ? null : (spendLimitPeriod as SpendLimitPeriod | null),
      spent: spentMicros === null ? null : formatUsd(spentMicros),
    });
  }
}

@ObjectType("CreatedApiKey")
export class CreatedApiKeyType {
  @Field(() => String, { description: "The full key (a2a_…). Shown only here; only its hash is stored." }) key!: string;
  @Field(() => ApiKeyType) apiKey!: ApiKeyType;
}
