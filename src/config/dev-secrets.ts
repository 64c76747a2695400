import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { randomToken } from "../infra/ids.js";

/**
 * Dev mode keeps what production must be given (operator token, encryption key) in DATA_DIR, so
 * a second `npm start` reuses them: stored trigger secrets stay decryptable and the printed
 * operator token stays valid.
 */
export interface DevSecrets {
  operatorToken: string;
  secretEncryptionKey: Buffer;
}

export function loadOrCreateDevSecrets(dataDir: string): DevSecrets {
  const file = join(dataDir, "dev-secrets.json");
  if (existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, "utf8")) as { operatorToken: string; secretEncryptionKey: string };
    return { operatorToken: stored.operatorToken, secretEncryptionKey: Buffer.from(stored.secretEncryptionKey, "base64") };
  }
  mkdirSync(dataDir, { recursive: true });
  const secrets = { operatorToken: randomToken("opr"), secretEncryptionKey: randomBytes(32) };
  writeFileSync(
    file,
    JSON.stringify({ operatorToken: secrets.operatorToken, secretEncryptionKey: secrets.secretEncryptionKey.toString("base64") }, null, 2),
    { mode: 0o600 },
  );
  return secrets;
}

/** The secrets a previous `npm start` generated, if any (for `npm run serve` / `worker` beside it). */
export function readDevSecrets(dataDir: string): DevSecrets | undefined {
  return existsSync(join(dataDir, "dev-secrets.json")) ? loadOrCreateDevSecrets(dataDir) : undefined;
}
