import { describe, expect, it } from "vitest";
import { isLegacyVersion } from "./call.js";

describe("isLegacyVersion: which A2A-Version header values both bindings serve as v0.3", () => {
  it("no header, an empty one and 0.3 (with a patch number, padded) are v0.3", () => {
    for (const v of [undefined, "", "0.3", "0.3.0", "0.3.12", " 0.3 "]) expect(isLegacyVersion(v)).toBe(true);
  });

  it("1.0 and anything else are not", () => {
    for (const v of ["1.0", "1", "0.30", "0.3.", "0.3.x", "0.4", "v0.3", "0.3,1.0"]) expect(isLegacyVersion(v)).toBe(false);
  });
});
