// The recall rule (domain/orders/recall.ts): which earlier order a new order may name as its recall, and
// what "the same site" means until sites exist.

import { describe, expect, it } from "vitest";
import {
  RECALL_WINDOW_MS,
  type RecalledOrder,
  type RecallRequest,
  recallFirst,
  recallRefusal,
  siteMismatch,
} from "../../../src/domain/orders/recall.js";

const COMPLETED = "2026-11-01T12:00:00.000Z";

const original = (overrides: Partial<RecalledOrder> = {}): RecalledOrder => ({
  id: "ord_1",
  account_id: "acct_1",
  livemode: true,
  status: "completed",
  trade: "plumbing",
  state: "TX",
  zip: "78701",
  address: "500 Congress Ave",
  completed_at: COMPLETED,
  ...overrides,
});

const request = (overrides: Partial<RecallRequest> = {}): RecallRequest => ({
  account_id: "acct_1",
  livemode: true,
  trade: "plumbing",
  state: "TX",
  zip: "78701",
  address: "500 Congress Ave",
  at: "2026-11-10T12:00:00.000Z",
  ...overrides,
});

const ruleOf = (o: RecalledOrder | null, r: RecallRequest) => recallRefusal("ord_1", o, r)?.rule ?? null;

describe("recallRefusal", () => {
  it("accepts a completed or invoiced job of the caller's, same trade and site, within 30 days", () => {
    expect(recallRefusal("ord_1", original(), request())).toBeNull();
    expect(ruleOf(original({ status: "invoiced" }), request())).toBeNull();
  });

  it("reads an unknown order, another account's and the other mode's alike, naming none as existing", () => {
    const unknown = recallRefusal("ord_1", null, request());
    const other = recallRefusal("ord_1", original({ account_id: "acct_2" }), request());
    const sandbox = recallRefusal("ord_1", original({ livemode: false }), request());
    expect(unknown).toEqual({ rule: "unknown_order", message: "You have no order ord_1." });
    expect(other).toEqual(unknown);
    expect(sandbox).toEqual(unknown);
  });

  it("refuses a cancelled order, another trade, another site, an open job", () => {
    expect(ruleOf(original({ status: "cancelled", completed_at: null }), request())).toBe("cancelled");
    expect(ruleOf(original(), request({ trade: "electrical" }))).toBe("other_trade");
    expect(ruleOf(original(), request({ address: "600 Congress Ave" }))).toBe("other_site");
    expect(ruleOf(original({ status: "on_site", completed_at: null }), request())).toBe("not_completed");
    expect(
      recallRefusal("ord_1", original({ status: "on_site", completed_at: null }), request())?.message,
    ).toMatch(/on_site, not completed/);
  });

  it("counts the 30 days from the original's completion, the last millisecond included", () => {
    const at = (ms: number) => new Date(Date.parse(COMPLETED) + ms).toISOString();
    expect(ruleOf(original(), request({ at: at(RECALL_WINDOW_MS) }))).toBeNull();
    expect(ruleOf(original(), request({ at: at(RECALL_WINDOW_MS + 1) }))).toBe("too_late");
    expect(recallRefusal("ord_1", original(), request({ at: at(RECALL_WINDOW_MS + 1) }))?.message).toContain(
      COMPLETED,
    );
  });
});

describe("the same site, until sites exist", () => {
  const at = (state: string, zip: string | null, address: string | null) => ({ state, zip, address });

  it("compares addresses when both orders give one, case, spacing and punctuation aside", () => {
    expect(siteMismatch(at("TX", null, "500 Congress Ave."), at("tx", null, "500  congress ave"))).toBeNull();
    expect(
      siteMismatch(at("TX", null, "500 Congress Ave"), at("TX", null, "501 Congress Ave")),
    ).not.toBeNull();
  });

  it("refuses one address in two ZIPs, and one ZIP in two states", () => {
    expect(siteMismatch(at("TX", "78701", "1 Main St"), at("TX", "78702", "1 Main St"))).toMatch(/ZIP/);
    expect(siteMismatch(at("TX", "78701", null), at("CA", "78701", null))).toMatch(/in TX, not CA/);
  });

  it("falls back to the ZIP (its five digits) when either lacks an address", () => {
    expect(siteMismatch(at("TX", "78701-1234", "1 Main St"), at("TX", "78701", null))).toBeNull();
    expect(siteMismatch(at("TX", "78701", null), at("TX", "78705", null))).toMatch(/ZIP/);
  });

  it("cannot tell two locations with neither an address nor a ZIP in common apart", () => {
    expect(siteMismatch(at("TX", null, "1 Main St"), at("TX", "78701", null))).toMatch(/neither/);
    expect(siteMismatch(at("TX", null, null), at("TX", null, null))).toMatch(/neither/);
  });
});

describe("recallFirst", () => {
  const of = (...ids: string[]) => ids.map((id) => ({ contractor: { id } }));
  const ids = (list: readonly { contractor: { id: string } }[]) => list.map((c) => c.contractor.id);

  it("moves the original job's contractor to the front, the others in their order", () => {
    expect(ids(recallFirst(of("a", "b", "c"), "c"))).toEqual(["c", "a", "b"]);
  });

  it("leaves the list as it is when the contractor is first already, not a candidate, or not known", () => {
    const list = of("a", "b");
    expect(recallFirst(list, "a")).toBe(list);
    expect(recallFirst(list, "z")).toBe(list);
    expect(recallFirst(list, null)).toBe(list);
  });
});
