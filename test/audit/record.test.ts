// Sealed records: the canonical JSON is RFC 8785 (checked against the `canonicalize` package, by the
// RFC's author), seals are well-formed and time-ordered, and a row matches its leaf only unchanged.

import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { applyDisclosures, encodeDisclosure } from "../../src/audit/disclosure.js";
import { leafHash } from "../../src/audit/merkle.js";
import { newSeal, rowMatchesLeaf, SEAL_PATTERN, sealRecord } from "../../src/audit/record.js";
import {
  disclosureProblem,
  disclosuresFor,
  holdsCallerDetails,
  openRecord,
  type Reader,
} from "../../src/audit/redaction.js";
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

  it("makes well-formed seals that sort by creation time", () => {
    // The seal's time prefix is the creation time in milliseconds: a millisecond later sorts after.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2026, 10, 1, 12, 0, 0, 0));
      const first = newSeal();
      vi.setSystemTime(Date.UTC(2026, 10, 1, 12, 0, 0, 1));
      const second = newSeal();
      expect(first).toMatch(SEAL_PATTERN);
      expect(second).toMatch(SEAL_PATTERN);
      expect(second > first).toBe(true);
    } finally {
      vi.useRealTimers();
    }
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

describe("record format v2: private parts as disclosures", () => {
  const refOf = (id: string) => `cref-${id.slice(4).padEnd(22, "x")}`;
  const input = {
    kind: "order.matched" as const,
    at: "2026-11-24T00:00:00.000Z",
    accountId: "acct_1",
    livemode: true,
    orderId: "ord_1",
    actor: "contractor:ctr_b" as const,
    refOf,
    data: {
      candidates: [{ contractor_id: "ctr_a", price_cents: 100 }],
      chosen: "ctr_a",
      matching_time_ms: 1,
    },
  };

  it("seals only digests of the private parts, and each role's disclosures check against them", () => {
    const entry = sealRecord(input);
    expect(entry.record).not.toContain("ctr_a");
    expect(entry.record).not.toContain("ctr_b");
    expect(entry.record).not.toContain("candidates");
    expect(entry.actor).toBe("contractor");
    expect(rowMatchesLeaf({ ...entry }, entry.leaf_hash)).toBe(true);
    const sealed = JSON.parse(entry.record);
    expect(sealed.v).toBe(2);
    expect(sealed.data.matching_time_ms).toBe(1);
    const open = (reader: Reader) => {
      const checked = applyDisclosures(sealed.data, disclosuresFor(entry.disclosures, reader));
      if (!checked.ok) throw new Error(checked.reason);
      return checked.claims;
    };
    expect(open({ role: "caller" })).toEqual({
      matching_time_ms: 1,
      chosen_ref: refOf("ctr_a"),
      actor_ref: refOf("ctr_b"),
    });
    expect(open({ role: "contractor", contractorId: "ctr_a" })).toEqual({
      matching_time_ms: 1,
      chosen: "ctr_a",
    });
    expect(open({ role: "contractor", contractorId: "ctr_b" })).toEqual({
      matching_time_ms: 1,
      actor_id: "ctr_b",
    });
    expect(open({ role: "dispatcher" })).toMatchObject(input.data);
    expect(openRecord(entry)).toEqual({
      actor: "contractor:ctr_b",
      data: { ...input.data, chosen_ref: refOf("ctr_a"), actor_id: "ctr_b", actor_ref: refOf("ctr_b") },
    });
  });

  it("refuses a disclosure the record does not commit to, or one given twice", () => {
    const entry = sealRecord(input);
    const data = JSON.parse(entry.record).data;
    const forged = encodeDisclosure(["AAAAAAAAAAAAAAAAAAAAAA", "chosen", "ctr_z"]);
    expect(applyDisclosures(data, [forged]).ok).toBe(false);
    const mine = disclosuresFor(entry.disclosures, { role: "caller" });
    expect(applyDisclosures(data, [...mine, mine[0] as string]).ok).toBe(false);
  });

  it("commits the caller's contact details inside the order's input, for the caller and the team only", () => {
    const order = {
      trade: "plumbing",
      location: { state: "CA", zip: "94103", address: "1 Market St", name: "Deli" },
      description: "Leak",
      callback_url: "https://hooks.example.com/a",
      reference_id: "WO-1",
    };
    const data = { input: order, idempotency_key: "k-1", reference_id: "WO-1" };
    const entry = sealRecord({ ...input, kind: "order.created", actor: "key:key_1", data });
    for (const secret of ["1 Market St", "Deli", "hooks.example.com", "WO-1", "k-1"])
      expect(entry.record).not.toContain(secret);
    expect(rowMatchesLeaf({ ...entry }, entry.leaf_hash)).toBe(true);
    const sealed = JSON.parse(entry.record).data;
    expect(sealed.input.location).toMatchObject({ state: "CA", zip: "94103" });
    expect(sealed.input.location._sd).toHaveLength(2);
    const open = (reader: Reader) => {
      const checked = applyDisclosures(sealed, disclosuresFor(entry.disclosures, reader));
      if (!checked.ok) throw new Error(checked.reason);
      return checked.claims;
    };
    expect(open({ role: "caller" })).toEqual(data);
    expect(open({ role: "dispatcher" })).toEqual(data);
    expect(open({ role: "contractor", contractorId: "ctr_a" })).toEqual({
      input: { trade: "plumbing", location: { state: "CA", zip: "94103" }, description: "Leak" },
    });
    // A disclosure is applied only in the object whose _sd lists it, and only once.
    const name = disclosuresFor(entry.disclosures, { role: "caller" }).filter(
      (d) => JSON.parse(Buffer.from(d, "base64url").toString("utf8"))[1] === "name",
    );
    expect(name).toHaveLength(1);
    const moved = { ...sealed, _sd: [...sealed._sd, ...sealed.input.location._sd] };
    expect(applyDisclosures(moved, [name[0] as string, name[0] as string]).ok).toBe(false);
    // Sealed so, it holds none of them in the clear; sealed before the rule, it did (and is withheld from
    // contractors).
    expect(holdsCallerDetails(sealed)).toBe(false);
    expect(holdsCallerDetails(data)).toBe(true);
    expect(holdsCallerDetails({ ...data, input: { location: { address: "1 Market St" } } })).toBe(true);
    expect(
      holdsCallerDetails({ input: { trade: "plumbing" }, idempotency_key: null, reference_id: null }),
    ).toBe(false);
    // A quote's input without contact details is sealed as it is.
    const plain = sealRecord({ ...input, actor: "key:key_1", data: { input: { trade: "plumbing" } } });
    expect(JSON.parse(plain.record).data).toEqual({ input: { trade: "plumbing" } });
    expect(plain.disclosures).toBeNull();
  });

  it("finds stored disclosures altered, added or lost against the digests the record commits", () => {
    const entry = sealRecord(input);
    expect(disclosureProblem(entry)).toBeNull();
    const lines = (entry.disclosures as string).split("\n");
    expect(lines.length).toBeGreaterThan(2);
    const altered = lines.map((l) => l.replace('"ctr_a"', '"ctr_z"')).join("\n");
    expect(disclosureProblem({ ...entry, disclosures: altered })).toMatch(/is not committed in the record/);
    const lost = lines.slice(1).join("\n");
    expect(disclosureProblem({ ...entry, disclosures: lost })).toMatch(
      new RegExp(`commits ${lines.length} digests, and ${lines.length - 1} disclosures are stored`),
    );
    const twice = [...lines, lines[0]].join("\n");
    expect(disclosureProblem({ ...entry, disclosures: twice })).toMatch(/given twice/);
    // Every one of them lost.
    expect(disclosureProblem({ ...entry, disclosures: null })).toMatch(/commits \d+ digests, and 0/);
  });

  it("still verifies version 1 records, sealed with everything in the clear", () => {
    const record = {
      account_id: "acct_1",
      actor: "contractor:ctr_b",
      at: "2025-01-01T00:00:00.000Z",
      data: { chosen: "ctr_a" },
      kind: "order.matched",
      livemode: true,
      order_id: "ord_1",
      seal: newSeal(),
      v: 1,
    };
    const text = canonicalize(record) as string;
    const row = {
      seal: record.seal,
      kind: record.kind,
      account_id: record.account_id,
      livemode: 1,
      order_id: record.order_id,
      actor: record.actor,
      created_at: record.at,
      record: text,
      disclosures: null,
    };
    const leaf = leafHash(Buffer.from(text, "utf8")).toString("hex");
    expect(rowMatchesLeaf(row, leaf)).toBe(true);
    expect(rowMatchesLeaf({ ...row, actor: "contractor" }, leaf)).toBe(false);
    expect(openRecord(row)).toEqual({ actor: "contractor:ctr_b", data: { chosen: "ctr_a" } });
    expect(disclosureProblem(row)).toBeNull();
  });
});
