import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { authenticateWebhook } from "./auth.js";

/**
 * Standard Webhooks is verified with node:crypto (auth.ts says why); the `standardwebhooks`
 * package is the reference: whatever it signs must verify, and any change to the id, the
 * timestamp, the body or the signature must not.
 */
describe("Standard Webhooks verification against the standardwebhooks package", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const other = `whsec_${randomBytes(24).toString("base64")}`;
  const now = Date.now();
  const sign = (id: string, tsSec: number, body: string, key = secret) => ({
    "webhook-id": id,
    "webhook-timestamp": String(tsSec),
    "webhook-signature": new Webhook(key).sign(id, new Date(tsSec * 1000), body),
  });
  const verify = (headers: Record<string, string>, body: string, secrets = [secret]) => authenticateWebhook(headers, Buffer.from(body, "utf8"), { secrets, now });

  const id = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);
  const ts = fc.integer({ min: -290, max: 290 }).map((d) => Math.floor(now / 1000) + d);

  it("accepts what the package signs, under any of the valid secrets, and among several signatures", () => {
    fc.assert(
      fc.property(id, ts, fc.string({ unit: "binary", maxLength: 300 }), (i, t, body) => {
        expect(verify(sign(i, t, body), body)).toBe("ok");
        expect(verify(sign(i, t, body), body, [other, secret])).toBe("ok");
        const both = sign(i, t, body);
        both["webhook-signature"] = `${sign(i, t, body, other)["webhook-signature"]} ${both["webhook-signature"]}`;
        expect(verify(both, body)).toBe("ok");
      }),
    );
  });

  it("refuses any change to the id, the timestamp, the body or the signature, a wrong secret, and a stale timestamp", () => {
    fc.assert(
      fc.property(id, ts, fc.string({ unit: "binary", minLength: 1, maxLength: 300 }), fc.nat(), (i, t, body, n) => {
        const h = sign(i, t, body);
        expect(verify({ ...h, "webhook-id": `${i}x` }, body)).toBe("denied");
        expect(verify({ ...h, "webhook-timestamp": String(t + 1) }, body)).toBe("denied");
        const chars = [...body];
        const at = n % chars.length;
        chars[at] = chars[at] === "a" ? "b" : "a";
        expect(verify(h, chars.join(""))).toBe("denied");
        const sig = Buffer.from(h["webhook-signature"].slice(3), "base64");
        sig[n % 32]! ^= 1;
        expect(verify({ ...h, "webhook-signature": `v1,${sig.toString("base64")}` }, body)).toBe("denied");
        expect(verify({ ...h, "webhook-signature": h["webhook-signature"].replace("v1,", "v2,") }, body)).toBe("denied");
        expect(verify(h, body, [other])).toBe("denied");
        const stale = sign(i, Math.floor(now / 1000) - 301, body);
        expect(verify(stale, body)).toBe("denied");
      }),
    );
  });

  it("signs the body's bytes: a body that is not UTF-8 verifies only with the MAC over those bytes", async () => {
    const { createHmac } = await import("node:crypto");
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const t = String(Math.floor(now / 1000));
    const key = Buffer.from(secret.slice(6), "base64");
    const mac = createHmac("sha256", key).update(`m1.${t}.`).update(raw).digest("base64");
    const headers = { "webhook-id": "m1", "webhook-timestamp": t, "webhook-signature": `v1,${mac}` };
    expect(authenticateWebhook(headers, raw, { secrets: [secret], now })).toBe("ok");
    const overString = createHmac("sha256", key).update(`m1.${t}.${raw.toString("utf8")}`).digest("base64");
    expect(authenticateWebhook({ ...headers, "webhook-signature": `v1,${overString}` }, raw, { secrets: [secret], now })).toBe("denied");
  });
});
