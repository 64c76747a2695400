import { loadConfigOrExit, type Config } from "../config/config.js";
import { readDevSecrets } from "../config/dev-secrets.js";

/**
 * Configuration of a standalone process (`npm run serve`, `npm run worker`): the environment,
 * plus — off production — the secrets a local `npm start` generated, so tokens and stored trigger
 * secrets match. Exits with a message naming what is missing.
 */
export function standaloneConfig(command: string): Config {
  const devSecrets = process.env.NODE_ENV === "production" ? undefined : readDevSecrets(process.env.DATA_DIR || "./.data");
  const config = loadConfigOrExit(process.env, devSecrets);
  if (!config.databaseUrl || !config.temporal.address) {
    process.stderr.write(`DATABASE_URL and TEMPORAL_ADDRESS: both required for ${command} (npm start runs everything locally)\n`);
    process.exit(1);
  }
  return config;
}
