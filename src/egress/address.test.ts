import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addressMatcher, classifyAddress } from "./address.js";
import { hostAllowed, validatePatterns } from "./allowlist.js";

// Pure classification: nothing here opens a connection.
describe("egress address classifier", () => {
  const refused: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "metadata"],
    ["169.254.10.10", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.100.100.200", "metadata"],
    ["168.63.129.16", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["192.0.2.10", "reserved"],
    ["fe80::1", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd00:ec2::254", "metadata"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.169.254", "metadata"],
    ["64:ff9b::a9fe:a9fe", "rfc6052"],
    ["2002:7f00:1::", "6to4"],
    ["::", "unspecified"],
    ["ff02::1", "multicast"],
  ];
  it.each(refused)("refuses %s (%s)", (address, range) => {
    expect(classifyAddress(address)).toEqual({ ok: false, range });
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "[2001:4860:4860::8888]"])("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toEqual({ ok: true });
  });

  const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const hex16 = fc.nat(0xffff).map((n) => n.toString(16));

  it("refuses every IPv4-compatible address (::/96, deprecated), in dotted and in hex form", () => {
    fc.assert(
      fc.property(octets, ([a, b, c, d]) => {
        // :: and ::1 keep their own names; everything else in ::/96 embeds an IPv4 address.
        fc.pre(a + b + c > 0 || d > 1);
        const hex = `::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        for (const form of [`::${a}.${b}.${c}.${d}`, hex, `[${hex}]`, `0:0:0:0:0:0:${a}.${b}.${c}.${d}`]) {
          expect(classifyAddress(form), form).toEqual({ ok: false, range: "ipv4Compatible" });
        }
      }),
    );
  });

  it("refuses the local-use NAT64 prefix 64:ff9b:1::/48 and site-local fec0::/10, whatever follows", () => {
    fc.assert(
      fc.property(fc.array(hex16, { minLength: 5, maxLength: 5 }), fc.nat(0x3f), hex16, (rest, low, second) => {
        const nat64 = `64:ff9b:1:${rest.join(":")}`;
        expect(classifyAddress(nat64), nat64).toEqual({ ok: false, range: "rfc8215" });
        const siteLocal = `${(0xfec0 | low).toString(16)}:${second}:${second}:${rest.join(":")}`;
        expect(classifyAddress(siteLocal), siteLocal).toEqual({ ok: false, range: "siteLocal" });
      }),
    );
  });

  it("an IPv4-mapped address is judged as the IPv4 address it maps, in dotted and in hex form", () => {
    fc.assert(
      fc.property(octets, ([a, b, c, d]) => {
        const v4 = `${a}.${b}.${c}.${d}`;
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        expect(classifyAddress(`::ffff:${v4}`)).toEqual(classifyAddress(v4));
        expect(classifyAddress(hex)).toEqual(classifyAddress(v4));
      }),
    );
  });

  it("does not take odd IPv4 spellings as literals", () => {
    for (const odd of ["127.1", "0x7f.0.0.1", "017700000001", "2130706433"]) expect(classifyAddress(odd)).toEqual({ ok: false, range: "invalid" });
  });

  it("exempts only the addresses and CIDRs the operator lists", () => {
    const exempt = addressMatcher(["127.0.0.2", "10.8.0.0/16"]);
    expect(exempt("127.0.0.2")).toBe(true);
    expect(exempt("127.0.0.1")).toBe(false);
    expect(exempt("10.8.3.4")).toBe(true);
    expect(exempt("10.9.0.1")).toBe(false);
    expect(exempt("::1")).toBe(false);
  });
});

describe("egress allowlist", () => {
  it("matches exact hosts and *.domain patterns, case-insensitively, never the bare domain for a wildcard", () => {
    const allow = validatePatterns(["API.example.com", "*.hooks.example.org"]);
    expect(hostAllowed(allow, "api.example.com")).toBe(true);
    expect(hostAllowed(allow, "api.example.com.")).toBe(true);
    expect(hostAllowed(allow, "evil.api.example.com")).toBe(false);
    expect(hostAllowed(allow, "a.hooks.example.org")).toBe(true);
    expect(hostAllowed(allow, "a.b.hooks.example.org")).toBe(true);
    expect(hostAllowed(allow, "hooks.example.org")).toBe(false);
    expect(hostAllowed(allow, "evilhooks.example.org")).toBe(false);
    expect(hostAllowed(allow, "api.example.com.evil.net")).toBe(false);
  });

  it("rejects patterns that are not host names", () => {
    for (const bad of ["*", "*.com.", "https://x.com", "a b.com", "x.com/path", "-a.com", "*.*.com"]) {
      expect(() => validatePatterns([bad])).toThrow(/not a host name/);
    }
  });
});
