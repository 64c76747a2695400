import ipaddr from "ipaddr.js";

/**
 * Which addresses `ctx.fetch` may connect to. Only global unicast passes; everything else
 * (loopback, private, link-local, CGNAT, unique-local, multicast, reserved, documentation,
 * translation prefixes that embed an IPv4 address, ...) is refused, and a few cloud metadata
 * addresses that sit in public space are refused by name. Range tables come from ipaddr.js.
 */

/** Metadata and platform endpoints, refused even where their range would pass. */
const METADATA = ["169.254.169.254", "169.254.170.2", "168.63.129.16", "100.100.100.200", "fd00:ec2::254"].map((a) => ipaddr.parse(a).toNormalizedString());

export type AddressVerdict = { ok: true } | { ok: false; range: string };

export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare)) return undefined;
  // Only the canonical dotted-quad form is an IPv4 literal for us (no "127.1", octal or hex).
  if (!bare.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return undefined;
  return ipaddr.parse(bare);
}

export function classifyAddress(address: string): AddressVerdict {
  let ip = parseAddress(address);
  if (!ip) return { ok: false, range: "invalid" };
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA.includes(ip.toNormalizedString())) return { ok: false, range: "metadata" };
  const range = ip.range();
  return range === "unicast" ? { ok: true } : { ok: false, range };
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
