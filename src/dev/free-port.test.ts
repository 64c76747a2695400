import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { EPHEMERAL_START, freePort, portProblem } from "./free-port.js";

describe("freePort", () => {
  it("chooses ports below the ephemeral range, where an outgoing connection or another listen(0) cannot take them before the caller binds", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(EPHEMERAL_START);
    }
    expect(new Set(ports).size).toBe(ports.length);
  });

  it("skips a port something already listens on, and honours the caller's bound", async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, "127.0.0.1", r));
    try {
      expect(await portProblem("127.0.0.1", port)).toBe("EADDRINUSE");
      const others = await Promise.all(Array.from({ length: 20 }, () => freePort("127.0.0.1", { below: 12_000 })));
      for (const other of others) {
        expect(other).not.toBe(port);
        expect(other).toBeLessThan(12_000);
        expect(await portProblem("127.0.0.1", other)).toBeUndefined();
      }
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
