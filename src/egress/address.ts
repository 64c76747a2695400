import ipaddr from "ipaddr.js";

/**
 * Which addresses `ctx.fetch` may connect to. Only global unicast passes; everything else
 * (loopback, private, link-local, CGNAT, unique-local, site-local, multicast, reserved,
 * documentation, translation prefixes and IPv4-compatible forms that embed an IPv4 address, ...)
 * is refused, and a few cloud metadata
 * addresses that sit in public space are refused by name. Range tables come from ipaddr.js.
 */

/** Metadata and platform endpoints, refused even where their range would pass. */
const METADATA = ["169.254.169.254", "169.254.170.2", "168.63.129.16", "100.100.100.200", "fd00:ec2::254"].map((a) => ipaddr.parse(a).toNormalizedString());

export type AddressVerdict = { ok: true } | { ok: false; range: string };

/**
 * IPv6 ranges ipaddr.js reports as plain unicast that embed or reach internal addresses: the
 * deprecated IPv4-compatible ::/96 (RFC 4291), local-use NAT64 (RFC 8215) and the deprecated
 * site-local fec0::/10 (RFC 3879), which some stacks still route internally.
 */
const REFUSED_V6: [ipaddr.IPv6, number, string][] = [
  [ipaddr.IPv6.parse("::"), 96, "ipv4Compatible"],
  [ipaddr.IPv6.parse("64:ff9b:1::"), 48, "rfc8215"],
  [ipaddr.IPv6.parse("fec0::"), 10, "siteLocal"],
];

/** `…:a.b.c.d` as its two hex groups: ipaddr.js reads `::a.b.c.d` as the mapped `::ffff:a.b.c.d`. */
function hexTail(v6: string): string {
  return v6.replace(/:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (whole, a: string, b: string, c: string, d: string) => {
    const o = [a, b, c, d].map(Number);
    if (o.some((n) => n > 255)) return whole;
    return `:${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  });
}

export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare)) return undefined;
  // Only the canonical dotted-quad form is an IPv4 literal for us (no "127.1", octal or hex).
  if (!bare.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return undefined;
  if (!bare.includes(":")) return ipaddr.parse(bare);
  const hex = hexTail(bare);
  return ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex) : undefined;
}

export function classifyAddress(address: string): AddressVerdict {
  let ip = parseAddress(address);
  if (!ip) return { ok: false, range: "invalid" };
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA.includes(ip.toNormalizedString())) return { ok: false, range: "metadata" };
  const range = ip.range();
  if (range !== "unicast") return { ok: false, range };
  if (ip.kind() === "ipv6") {
    for (const [net, bits, name] of REFUSED_V6) if ((ip as ipaddr.IPv6).match(net, bits)) return { ok: false, range: name };
  }
  return { ok: true };
}

/** `EGRESS_ALLOW_ADDRESSES`: single addresses or CIDRs the operator exempts from the refusal. */
export function addressMatcher(entries: string[]): (address: string) => boolean {
  const cidrs = entries.map((e) => {
    if (e.includes("/")) return ipaddr.parseCIDR(e);
    const ip = ipaddr.parse(e);
    return [ip, ip.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
  });
  return (address) => {
    const ip = parseAddress(address);
    if (!ip) return false;
    return cidrs.some(([net, bits]) => ip.kind() === net.kind() && ip.match(net as never, bits));
  };
}
