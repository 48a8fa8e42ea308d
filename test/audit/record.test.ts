// Sealed records: the canonical JSON is RFC 8785 (checked against the `canonicalize` package, by the
// RFC's author), seals are well-formed and time-ordered, and a row matches its leaf only unchanged.

import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newSeal, rowMatchesLeaf, SEAL_PATTERN, sealRecord } from "../../src/audit/record.js";
import { canonicalJson } from "../../src/canonical-json.js";

describe("audit records", () => {
  it("serialises any JSON value exactly as RFC 8785 does", () => {
    const noLoneSurrogates = fc.string({ unit: "grapheme" });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.constant(null),
        fc.constant(undefined),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        noLoneSurrogates,
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.oneof(noLoneSurrogates, fc.nat().map(String)), tie("value"), { maxKeys: 5 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        if (value === undefined) return;
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps a __proto__ key as a key, and any key order gives the same text", () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"z":1,"a":[{"y":2,"x":1}]},"a":null}');
    expect(canonicalJson(parsed)).toBe(canonicalize(parsed));
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"a":[{"x":1,"y":2}],"z":1},"a":null,"b":1}');
  });

  it("makes well-formed seals that sort by creation time", async () => {
    const first = newSeal();
    await new Promise((r) => setTimeout(r, 5));
    const second = newSeal();
    expect(first).toMatch(SEAL_PATTERN);
    expect(second > first).toBe(true);
  });

  it("matches its leaf only while the row is unchanged", () => {
    const entry = sealRecord({
      kind: "quote.issued",
      at: new Date().toISOString(),
      accountId: "acct_1",
      livemode: true,
      orderId: null,
      actor: "key:key_1",
      data: { price: 123.45, note: "é" },
    });
    const { leaf_hash, ...row } = entry;
    expect(rowMatchesLeaf(row, leaf_hash)).toBe(true);
    expect(rowMatchesLeaf({ ...row, record: row.record.replace("123.45", "123.46") }, leaf_hash)).toBe(false);
    expect(rowMatchesLeaf({ ...row, account_id: "acct_2" }, leaf_hash)).toBe(false);
    expect(rowMatchesLeaf({ ...row, livemode: 0 }, leaf_hash)).toBe(false);
    expect(rowMatchesLeaf({ ...row, kind: "order.created" }, leaf_hash)).toBe(false);
  });
});
