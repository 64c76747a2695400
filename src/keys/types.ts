import { Field, ID, Int, ObjectType } from "type-graphql";
import type { ApiKeyRow } from "./service.js";

@ObjectType("ApiKey", { description: "An agent's key for the chat endpoint. The key itself is shown only once, at creation." })
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The first 8 characters of the key, for recognising it" }) prefix!: string;
  @Field(() => String, { description: "The last 4 characters of the key" }) last4!: string;
  @Field(() => Int, { nullable: true, description: "Requests per minute; null means the account default" }) rateLimitPerMinute!: number | null;
  @Field(() => Date, { nullable: true, description: "Updated at most about once a minute" }) lastUsedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;

  static from(row: ApiKeyRow): ApiKeyType {
    return Object.assign(new ApiKeyType(), row);
  }
}

@ObjectType("CreatedApiKey")
export class CreatedApiKeyType {
  @Field(() => String, { description: "The full key (a2a_…). Shown only here; only its hash is stored." }) key!: string;
  @Field(() => ApiKeyType) apiKey!: ApiKeyType;
}
