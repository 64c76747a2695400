import { loadConfig, type Config } from "../../src/config/config.js";

/** A development configuration (the two required secrets made up) with the given variables on top. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"), ...env });
}
