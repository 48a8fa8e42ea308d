// Contractor handles: the contract's form `<prefix>-{id}` (cref-...), opaque and per account, and the
// spelling answered before (cref_...) still recognised as a handle wherever one may come back.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CONTRACTOR_REF_PATTERN, ContractorRefs } from "../../src/auth/contractor-refs.js";
import { contractorIdSchema } from "../../src/operations/kernel/schemas.js";

describe("contractor handles", () => {
  const refs = new ContractorRefs(randomBytes(32));

  it("take the contract's form cref-{22 base62}, one per account and contractor", () => {
    const ref = refs.of("acct_a", "ctr_1");
    expect(ref).toMatch(/^cref-[0-9A-Za-z]{22}$/);
    expect(refs.of("acct_a", "ctr_1")).toBe(ref);
    expect(refs.of("acct_b", "ctr_1")).not.toBe(ref);
    expect(ref).not.toContain("ctr_1");
  });

  it("are recognised in both spellings, the new and the one answered before", () => {
    const body = refs.of("acct_a", "ctr_1").slice("cref-".length);
    expect(CONTRACTOR_REF_PATTERN.test(`cref-${body}`)).toBe(true);
    expect(CONTRACTOR_REF_PATTERN.test(`cref_${body}`)).toBe(true);
    expect(CONTRACTOR_REF_PATTERN.test(`cref:${body}`)).toBe(false);
    expect(CONTRACTOR_REF_PATTERN.test("ctr_1")).toBe(false);
    // Sent where a contractor id is due, either spelling is told it is a handle, not an id.
    for (const sent of [`cref-${body}`, `cref_${body}`]) {
      const parsed = contractorIdSchema.safeParse(sent);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/not a contractor_ref handle \(cref-\.\.\.\)/);
    }
  });
});
