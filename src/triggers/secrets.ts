import { randomBytes } from "node:crypto";
import { AppError } from "../errors/app-error.js";

/** `whsec_` + base64 of 32 random bytes: Standard Webhooks libraries accept it as is. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** A secret set by the owner: 24 to 256 printable ASCII characters (no spaces at the ends). */
export function validateCustomSecret(secret: string): string {
  if (secret.length < 24 || secret.length > 256) {
    throw new AppError("validation_failed", "secret must be 24 to 256 characters", { param: "secret" });
  }
  if (!/^[\x21-\x7e][\x20-\x7e]*[\x21-\x7e]$/.test(secret)) {
    throw new AppError("validation_failed", "secret must contain only printable ASCII characters and not start or end with a space", { param: "secret" });
  }
  return secret;
}

export interface StoredSecret {
  secret: string;
  /** Epoch ms; null for the current secret. */
  expiresAt: number | null;
}

/** The secrets accepted at `now`: the current one and any still inside its grace window. */
export function validSecrets(secrets: StoredSecret[], now: number): string[] {
  return secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret);
}

// The Standard Webhooks key lives with the signer (inbound checks and outbound signatures share it).
export { standardWebhooksKey } from "../outbound/sign.js";
