import { randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random bytes drawn from a refilled buffer: one CSPRNG call per 4 KiB instead of one per id. */
const pool = Buffer.allocUnsafe(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/**
 * Base62 with at least `bytes` × 8 bits of randomness: URL-safe, copy-paste-safe (double-click
 * selects it whole). Each character is an unbiased draw (bytes >= 248 are rejected), so the
 * string has ceil(bytes × 8 / log2 62) characters, as many as base62 of a `bytes`-byte number.
 */
export function randomBase62(bytes: number): string {
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

/** Record ids: a type prefix plus 128 random bits, so ids are unguessable and self-describing. */
export function newId(prefix: "acc" | "agt" | "key" | "thr" | "msg" | "trg" | "sec" | "job" | "aud" | "adt" | "tsk" | "ctx" | "pnc" | "sch" | "dlv" | "inp"): string {
  return `${prefix}_${randomBase62(16)}`;
}

/** Bearer credentials: prefix plus 256 random bits. */
export function randomToken(prefix: "adm" | "a2a" | "opr"): string {
  return `${prefix}_${randomBase62(32)}`;
}
