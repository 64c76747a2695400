import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, safeEqual, sha256Hex } from "./crypto.js";
import { newId, randomToken } from "./ids.js";
import { scrubSecrets } from "./logger.js";

describe("crypto kernel", () => {
  it("seals secrets with AES-256-GCM: round trip, fresh IV each time, tamper and wrong key detected", () => {
    const key = randomBytes(32);
    const a = encryptSecret("whsec_abc", key);
    const b = encryptSecret("whsec_abc", key);
    expect(a).not.toBe(b);
    expect(decryptSecret(a, key)).toBe("whsec_abc");
    expect(() => decryptSecret(a, randomBytes(32))).toThrow();
    const parts = a.split(".");
    parts[3] = Buffer.from("whsec_abd").toString("base64url");
    expect(() => decryptSecret(parts.join("."), key)).toThrow();
  });

  it("compares in constant time and respects length", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
    expect(sha256Hex("a")).toHaveLength(64);
  });

  it("makes prefixed, unguessable ids and tokens", () => {
    expect(newId("acc")).toMatch(/^acc_[0-9A-Za-z]{22}$/);
    expect(randomToken("adm")).toMatch(/^adm_[0-9A-Za-z]{43}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newId("job"))).size).toBe(1000);
  });

  it("masks token-shaped strings in log messages", () => {
    const token = randomToken("a2a");
    const out = scrubSecrets(`key ${token} and whsec_${randomBytes(32).toString("base64")}`);
    expect(out).not.toContain(token.slice(4));
    expect(out).toContain("a2a_[REDACTED]");
    expect(out).toContain("whse[REDACTED]");
  });
});
