/**
 * Money is integer micro-USD (1 USD = 1,000,000) everywhere below the API surface; decimal
 * strings at the surface. No floating point touches a balance.
 */
export const MICROS_PER_USD = 1_000_000n;
const DECIMAL = /^(\d{1,12})(?:\.(\d{1,6}))?$/;

/** Parses "10", "10.5", "0.000001" into micro-USD. Returns null for anything else. */
export function parseUsd(value: string | number): bigint | null {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value.trim();
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const whole = BigInt(m[1]!);
  const frac = BigInt((m[2] ?? "").padEnd(6, "0"));
  return whole * MICROS_PER_USD + frac;
}

/** Formats micro-USD as a decimal string with six places: 10000000 → "10.000000". */
export function formatUsd(micros: bigint | number | string): string {
  let n = BigInt(micros);
  const negative = n < 0n;
  if (negative) n = -n;
  const whole = n / MICROS_PER_USD;
  const frac = (n % MICROS_PER_USD).toString().padStart(6, "0");
  return `${negative ? "-" : ""}${whole}.${frac}`;
}
