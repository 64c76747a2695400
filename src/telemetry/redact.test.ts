import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scrubAttributes, scrubUrls } from "./redact.js";

/** Pure scrubbing of what spans export (the end-to-end proof is test/tracing.test.ts). */
describe("span scrubbing", () => {
  const token = fc.stringMatching(/^[A-Za-z0-9_%.~-]{6,40}$/);
  const path = fc.stringMatching(/^(\/[a-z0-9_.-]{1,12}){0,4}$/);

  it("no query string or URL credential survives, in URL attributes or inside any text; host and path stay", () => {
    fc.assert(
      fc.property(token, token, path, fc.constantFrom("http", "https"), (secret, user, p, scheme) => {
        const url = `${scheme}://${user}:${secret}@api.example.com:8443${p}?key=${secret}&x=1#frag-${secret}`;
        const target = `${p || "/"}?token=${secret}`;
        const out = scrubAttributes({ "http.url": url, "url.full": url, "http.target": target, "url.query": `key=${secret}`, "exception.message": `fetch ${url} failed`, n: 3 });
        expect(JSON.stringify(out)).not.toContain(secret);
        expect(out["http.url"]).toBe(`${scheme}://[redacted]@api.example.com:8443${p}?[redacted]`);
        expect(out["http.target"]).toBe(`${p || "/"}?[redacted]`);
        expect(out["url.query"]).toBe("[redacted]");
        expect(out.n).toBe(3);
        expect(scrubUrls(`GET ${scheme}://h.test${p}?a=${secret} then`)).toBe(`GET ${scheme}://h.test${p}?[redacted] then`);
      }),
    );
  });

  it("a run's redactor applies to every string attribute", () => {
    const out = scrubAttributes({ "http.url": "https://h.test/hook/sk_1?x=sk_1", "peer.service": "sk_1" }, (t) => t.split("sk_1").join("[redacted]"));
    expect(out).toEqual({ "http.url": "https://h.test/hook/[redacted]?[redacted]", "peer.service": "[redacted]" });
  });
});
