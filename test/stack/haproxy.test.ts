import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureCertificate, findHaproxy, haproxyConfig } from "../../src/stack/haproxy.js";

/** Both balancer configurations (stack:prod's generated one, docker-compose's deploy/haproxy.cfg) pass `haproxy -c`. */
const haproxy = findHaproxy();
const inCI = Boolean(process.env.CI) && process.env.CI !== "false";
const dir = mkdtempSync(join(tmpdir(), "agw-haproxy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const check = (config: string) => {
  const file = join(dir, `check-${Math.random().toString(36).slice(2)}.cfg`);
  writeFileSync(file, config);
  return spawnSync(haproxy!, ["-c", "-f", file], { encoding: "utf8" });
};

describe.skipIf(!haproxy && !inCI)("HAProxy configurations", () => {
  const tls = ensureCertificate(join(dir, "tls"));

  it("stack:prod's generated config is valid, terminates TLS, checks /readyz and adds Retry-After to 503s", () => {
    const config = haproxyConfig({ bind: { host: "127.0.0.1", port: 8443 }, bundleFile: tls.bundleFile, backends: [{ name: "api-1", port: 1 }, { name: "api-2", port: 2 }] });
    const r = check(config);
    expect(r.status, r.stderr).toBe(0);
    expect(config).toMatch(/ssl crt/);
    expect(config).toMatch(/option httpchk GET \/readyz/);
    expect(config).toMatch(/Retry-After/);
    expect(config).toMatch(/retry-on conn-failure\n/); // never a resent POST
  });

  it("docker-compose's deploy/haproxy.cfg is valid", () => {
    const config = readFileSync(new URL("../../deploy/haproxy.cfg", import.meta.url), "utf8").replace("/usr/local/etc/haproxy/tls/gateway.pem", tls.bundleFile);
    const r = check(config);
    expect(r.status, r.stderr).toBe(0);
  });
});
