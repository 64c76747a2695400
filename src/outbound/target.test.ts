import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { createConnector, EgressError } from "../egress/connect.js";
import { AppError } from "../errors/app-error.js";
import { generateSecret } from "../triggers/secrets.js";
import { standardWebhookHeaders } from "./sign.js";
import { validateCallbackUrl } from "./target.js";

// Pure decisions: nothing here opens a connection.
const egress = (env: Record<string, string> = {}) =>
  loadConfig({ NODE_ENV: "test", DATABASE_URL: "postgres://x/y", TEMPORAL_ADDRESS: "127.0.0.1:7233", OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"), ...env }).egress;

describe("outbound target decisions", () => {
  const strict = egress({ EGRESS_ALLOW_PRIVATE: "false" });
  const dev = egress({ EGRESS_ALLOW_PRIVATE: "true" });

  it.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.7", "private"],
    ["192.168.0.1", "private"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["::ffff:127.0.0.1", "loopback"],
  ])("refuses %s (%s) after DNS without EGRESS_ALLOW_PRIVATE", (address, range) => {
    const connector = createConnector(strict);
    expect(() => connector.check("hooks.example.com", address, false, "callback")).toThrow(new EgressError(`callback refused: hooks.example.com resolves to ${address}, a ${range} address`, true));
    expect(() => connector.check("hooks.example.com", "93.184.216.34", false, "callback")).not.toThrow();
  });

  it("allows http:// only to loopback, and only with EGRESS_ALLOW_PRIVATE", () => {
    expect(() => createConnector(strict).check("localhost", "127.0.0.1", true, "callback")).toThrow(/http:\/\/ is allowed only to loopback/);
    expect(() => createConnector(dev).check("localhost", "127.0.0.1", true, "callback")).not.toThrow();
    expect(() => createConnector(dev).check("lan.test", "10.0.0.1", true, "callback")).toThrow(/http:\/\/ is allowed only to loopback/);
    expect(() => createConnector(dev).check("lan.test", "93.184.216.34", true, "callback")).toThrow(/http:\/\/ is allowed only to loopback/);
  });

  it("validates a callback URL as it is saved", () => {
    expect(validateCallbackUrl(" https://hooks.example.com/a?b=1 ", strict)).toBe("https://hooks.example.com/a?b=1");
    for (const bad of ["", "hooks.example.com", "ftp://x.com/", "http://x.com/", "https://u:p@x.com/", "https://x.com/#f", "https://127.0.0.1/", "https://[::1]/", "https://169.254.169.254/", "https://10.1.2.3/"]) {
      expect(() => validateCallbackUrl(bad, strict), bad).toThrow(AppError);
    }
    expect(validateCallbackUrl("http://127.0.0.1:8080/cb", dev)).toBe("http://127.0.0.1:8080/cb");
    expect(validateCallbackUrl("http://localhost:8080/cb", dev)).toBe("http://localhost:8080/cb");
    expect(() => validateCallbackUrl("http://example.com/cb", dev)).toThrow(/only to loopback/);
  });

  it("answers any input with a URL or validation_failed naming the field, never another error", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.webUrl().map((u) => u.replace(/^https?/, "https"))), (raw) => {
        try {
          const url = validateCallbackUrl(raw, strict);
          expect(new URL(url).protocol).toBe("https:");
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe("validation_failed");
        }
      }),
    );
  });
});

describe("Standard Webhooks signing against the standardwebhooks package", () => {
  it("signs as the reference does, one signature per secret, each verifiable alone", () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const body = JSON.stringify({ type: "job.done", data: { ü: "ñ", n: 1 } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders([a, b], "msg_1", ts, body);
    expect(headers["webhook-signature"]!.split(" ")[0]).toBe(new Webhook(a).sign("msg_1", new Date(ts * 1000), body));
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify(body.replace("1", "2"), headers)).toThrow();
  });
});
