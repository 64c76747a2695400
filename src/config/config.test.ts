import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "./config.js";

const dev = { OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("configuration", () => {
  it("has defaults that work out of the box in development", () => {
    const c = loadConfig(dev);
    expect(c.port).toBe(3000);
    expect(c.host).toBe("127.0.0.1");
    expect(c.allowInsecureHttp).toBe(true);
    expect(c.temporal).toMatchObject({ namespace: "default", taskQueue: "agent-gateway" });
    expect(c.publicBaseUrl).toBe("http://127.0.0.1:3000");
    expect(c.secretEncryptionKey.length).toBe(32);
  });

  it("names the variable and the bad value", () => {
    expect(problems({ ...dev, PORT: "abc" })).toEqual([expect.stringMatching(/^PORT: .*\(got "abc"\)/)]);
    expect(problems({ ...dev, PORT: "70000" })[0]).toMatch(/^PORT: must be between 0 and 65535/);
    expect(problems({ ...dev, LOG_LEVEL: "loud" })[0]).toMatch(/^LOG_LEVEL:/);
    expect(problems({ ...dev, DATABASE_URL: "mysql://x" })[0]).toMatch(/^DATABASE_URL: must be a URL/);
    expect(problems({ ...dev, TEMPORAL_ADDRESS: "nope" })[0]).toMatch(/^TEMPORAL_ADDRESS: must be host:port/);
    expect(problems({ ...dev, ALLOW_INSECURE_HTTP: "maybe" })[0]).toMatch(/^ALLOW_INSECURE_HTTP: must be true or false/);
    expect(problems({ ...dev, MODEL_PRICES: "{not json" })[0]).toMatch(/^MODEL_PRICES: must be JSON/);
  });

  it("never echoes secret values in its messages", () => {
    const [p] = problems({ ...dev, SECRET_ENCRYPTION_KEY: "c2hvcnQ=" });
    expect(p).toMatch(/^SECRET_ENCRYPTION_KEY: must be 32 bytes/);
    expect(p).not.toContain("c2hvcnQ=");
    expect(problems({ ...dev, OPERATOR_TOKEN: "short-secret" })[0]).not.toContain("short-secret");
  });

  it("requires the production secrets and public URL when NODE_ENV=production", () => {
    const p = problems({ NODE_ENV: "production" });
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^OPERATOR_TOKEN: required/),
        expect.stringMatching(/^SECRET_ENCRYPTION_KEY: required/),
        expect.stringMatching(/^PUBLIC_BASE_URL: required/),
      ]),
    );
  });

  it("production defaults are strict: bind all interfaces, HTTPS required", () => {
    const c = loadConfig({ ...dev, NODE_ENV: "production", PUBLIC_BASE_URL: "https://gw.example.com/", PROVIDER_A_API_KEY: "a", PROVIDER_B_API_KEY: "b" });
    expect(c.host).toBe("0.0.0.0");
    expect(c.allowInsecureHttp).toBe(false);
    expect(c.publicBaseUrl).toBe("https://gw.example.com");
  });

  it("accepts hex or base64 keys, parses TRUST_PROXY and requires TLS files in pairs", () => {
    expect(loadConfig({ ...dev, SECRET_ENCRYPTION_KEY: "ab".repeat(32) }).secretEncryptionKey.equals(Buffer.alloc(32, 0xab))).toBe(true);
    expect(loadConfig({ ...dev, TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({ ...dev, TRUST_PROXY: "loopback, 10.0.0.0/8" }).trustProxy).toBe("loopback, 10.0.0.0/8");
    expect(loadConfig({ ...dev, TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(problems({ ...dev, TLS_CERT_FILE: "/x.pem" })[0]).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
  });

  it("treats empty strings as unset (docker compose passes them for missing values)", () => {
    expect(loadConfig({ ...dev, PORT: "", DATABASE_URL: "" }).port).toBe(3000);
  });
});

describe("configuration surface", () => {
  const root = new URL("../../", import.meta.url);
  const read = (f: string) => readFileSync(new URL(f, root), "utf8");

  it("reads the core variables every deployment sets", () => {
    const design = ["PORT", "HOST", "DATA_DIR", "DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_TASK_QUEUE", "TEMPORAL_CLI_PATH", "OPERATOR_TOKEN", "SECRET_ENCRYPTION_KEY", "PUBLIC_BASE_URL", "ALLOW_INSECURE_HTTP", "TRUST_PROXY", "TLS_CERT_FILE", "TLS_KEY_FILE", "PROVIDER_A_BASE_URL", "PROVIDER_A_API_KEY", "PROVIDER_B_BASE_URL", "PROVIDER_B_API_KEY", "LOG_LEVEL"];
    for (const v of design) expect(CONFIG_VARIABLES, v).toContain(v);
  });

  it("docker-compose.yml sets only variables the configuration module knows", () => {
    const compose = read("docker-compose.yml");
    // The app's processes: the x-app, x-api and x-worker blocks (api-1/2, worker-1/2 use them).
    const blocks = compose.split(/\n(?=\S)/).filter((b) => /^x-(app|api|worker):/.test(b));
    expect(blocks).toHaveLength(3);
    const keys = [...blocks.join("\n").matchAll(/^\s{4,6}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(keys.length).toBeGreaterThan(10);
    for (const k of keys) expect(CONFIG_VARIABLES, `${k} in docker-compose.yml`).toContain(k);
  });

  it("the Helm chart's values.schema.json accepts exactly the variables the configuration module knows", () => {
    const schema = JSON.parse(read("deploy/helm/agent-gateway/values.schema.json")) as { definitions: { env: { propertyNames: { enum: string[] } } } };
    expect([...schema.definitions.env.propertyNames.enum].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it("the configuration reference (docs/reference/configuration.md, generated) documents every variable, once, with a meaning", () => {
    const reference = read("docs/reference/configuration.md");
    const rows = [...reference.matchAll(/^\| `([A-Z0-9_]+)` \| [^|]+ \| (.+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim()] as const);
    expect(rows.map(([name]) => name).sort()).toEqual([...CONFIG_VARIABLES].sort());
    for (const [name, meaning] of rows) expect(meaning.length, name).toBeGreaterThan(10);
  });
});
