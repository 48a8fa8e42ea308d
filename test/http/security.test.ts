// The shared security suite over every keyed operation of the registry (test/helpers/security-suite.ts),
// and the rule that binds a contractor key to its contractor.

import { describe, expect, it } from "vitest";
import { createHarness } from "../helpers/harness.js";
import { runSecuritySuite } from "../helpers/security-suite.js";

runSecuritySuite();

describe("key kinds", () => {
  it("issues a contractor key only for a named contractor, and names one only on a contractor key", async () => {
    const h = await createHarness();
    const contractorId = (await h.services.store.contractors.load())[0]?.id as string;
    await expect(
      h.services.keys.issue({ accountName: "x", mode: "test", actor: "operator:test", kind: "contractor" }),
    ).rejects.toThrow(/names its contractor/);
    await expect(
      h.services.keys.issue({ accountName: "x", mode: "test", actor: "operator:test", contractorId }),
    ).rejects.toThrow(/names its contractor/);
  });
});
