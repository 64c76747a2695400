import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Base62 of `bytes` random bytes: URL-safe, copy-paste-safe (double-click selects it whole). */
export function randomBase62(bytes: number): string {
  const buf = randomBytes(bytes);
  let n = BigInt(`0x${buf.toString("hex")}`);
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  let out = "";
  for (let i = 0; i < length; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

/** Record ids: a type prefix plus 128 random bits, so ids are unguessable and self-describing. */
export function newId(prefix: "acc" | "agt" | "key" | "thr" | "msg" | "trg" | "sec" | "job" | "aud" | "adt"): string {
  return `${prefix}_${randomBase62(16)}`;
}

/** Bearer credentials: prefix plus 256 random bits. */
export function randomToken(prefix: "adm" | "a2a" | "opr"): string {
  return `${prefix}_${randomBase62(32)}`;
}
