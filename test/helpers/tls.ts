import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCa {
  /** PEM file of the CA, for EGRESS_CA_FILE. */
  caFile: string;
  cert: string;
  key: string;
  cleanup(): void;
}

/** A throwaway CA and one server certificate for the given names/addresses, made with openssl. */
export function makeTestCa(names: string[], addresses: string[]): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "agw-ca-"));
  const f = (n: string) => join(dir, n);
  const ossl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "2", "-subj", "/CN=agent-gateway test CA");
  ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("srv.key"), "-out", f("srv.csr"), "-subj", `/CN=${names[0] ?? "localhost"}`);
  const san = [...names.map((n) => `DNS:${n}`), ...addresses.map((a) => `IP:${a}`)].join(",");
  writeFileSync(f("ext.cnf"), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  ossl("x509", "-req", "-in", f("srv.csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial", "-out", f("srv.pem"), "-days", "2", "-extfile", f("ext.cnf"));
  return {
    caFile: f("ca.pem"),
    cert: readFileSync(f("srv.pem"), "utf8"),
    key: readFileSync(f("srv.key"), "utf8"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
