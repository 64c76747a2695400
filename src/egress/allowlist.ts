import { isIP } from "node:net";
import { AppError } from "../errors/app-error.js";

/**
 * An agent's egress allowlist: exact host names (`api.example.com`), one-level-or-deeper
 * wildcards (`*.example.com`, which does not match `example.com` itself) and IP literals.
 * Hosts compare case-insensitively without a trailing dot; ports are not part of a pattern.
 */

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const MAX_PATTERNS = 100;

function normalHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, "").replace(/^\[|\]$/g, "");
}

export function validatePatterns(patterns: string[]): string[] {
  if (patterns.length > MAX_PATTERNS) throw new AppError("validation_failed", `allow: at most ${MAX_PATTERNS} patterns`, { param: "allow" });
  return [...new Set(patterns.map((raw, i) => {
    const p = normalHost(raw);
    const name = p.startsWith("*.") ? p.slice(2) : p;
    const isIp = isIP(name) !== 0 && !p.startsWith("*.");
    const labels = name.split(".");
    if (!isIp && (labels.length < (p.startsWith("*.") ? 2 : 1) || !labels.every((l) => LABEL.test(l)) || p.length > 253)) {
      throw new AppError("validation_failed", `allow[${i}]: "${raw}" is not a host name or *.domain pattern`, { param: `allow[${i}]` });
    }
    return p;
  }))];
}

export function hostAllowed(patterns: string[], host: string): boolean {
  const h = normalHost(host);
  return patterns.some((p) => (p.startsWith("*.") ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p));
}
