import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port chosen, above the registered services' usual ports. */
const LOWEST = 10_000;

/** Where the OS's ephemeral range starts: Linux says; 32768 is Linux's default and below every other OS's. Read once. */
export const EPHEMERAL_START = ((): number => {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
})();

/** Ports this process has handed out already, so two calls never return the same one. */
const handedOut = new Set<number>();

/**
 * A free TCP port on `host`, chosen below the OS's ephemeral range. Callers bind it later (a
 * server started seconds afterwards, a child process's flag), and a port the OS assigned with
 * `listen(0)` can be taken in between: the kernel hands ephemeral ports to every outgoing
 * connection and every other `listen(0)`, and Temporal's dev server picks its internal ports that
 * way. A port below the range is only ever taken by someone asking for it by number.
 * `below`: a bound of the caller's own (Temporal keeps membership ports in a smallint).
 */
export async function freePort(host = "127.0.0.1", options: { below?: number } = {}): Promise<number> {
  const below = options.below ?? Infinity;
  let highest = Math.min(EPHEMERAL_START, below) - 1;
  // An ephemeral range that starts unusually low: the caller's own bound, if any, still holds.
  if (highest - LOWEST < 1_000 && below !== Infinity) highest = below - 1;
  if (highest - LOWEST < 1_000) return osAssignedPort(host);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1));
    if (handedOut.has(port) || (await portProblem(host, port)) !== undefined) continue;
    handedOut.add(port);
    return port;
  }
  return osAssignedPort(host);
}

function osAssignedPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Why nothing could listen on `host:port` right now (an error code such as EADDRINUSE), or undefined if it could. */
export function portProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
