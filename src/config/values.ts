import { z } from "zod";

/** The value types the configuration variables share (src/config/areas/*.ts). */

export const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ["true", "false", "1", "0", "yes", "no"].includes(v), {
    message: "must be true or false",
  })
  .transform((v) => v === "true" || v === "1" || v === "yes");

export const port = z.coerce
  .number({ message: "must be a port number" })
  .int("must be a whole number")
  .min(0, "must be between 0 and 65535")
  .max(65535, "must be between 0 and 65535");

export const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      { message: `must be a URL (${protocols.join(" or ")})` },
    );

export const hostPort = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, "must be host:port, e.g. localhost:7233");

export const encryptionKey = z
  .string()
  .trim()
  .transform((v, ctx) => {
    const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, "hex") : Buffer.from(v, "base64");
    if (buf.length !== 32) {
      ctx.addIssue({
        code: "custom",
        message: "must be 32 bytes, as 64 hex characters or base64 (openssl rand -base64 32)",
      });
      return z.NEVER;
    }
    return buf;
  });

export const jsonRecord = <T extends z.ZodType>(value: T, example: string) =>
  z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: `must be JSON, e.g. ${example}` });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), value));

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
