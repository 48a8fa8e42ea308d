// Exports for accounts payable (issue 33): an account's invoices and orders in CSV and JSON Lines, only
// its own in its key's mode; the dispatch team's of every account; the date range and status filters; the
// CSV read back by a strict RFC 4180 parser, its formula-injection guard; the refusals of a bad range; and
// a long export read from the store a page at a time. On SQLite and, in the postgres project, PostgreSQL.

import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EXPORT_PAGE_ROWS } from "../../src/operations/orders/export-format.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { expectProblem } from "../helpers/security-suite.js";

const REPORT = "/api/contractor/v1/jobs/status";
const INVOICE = "/api/contractor/v1/jobs/invoice";
const DECIDE = "/api/dispatch/v1/orders/invoice-decision";
const PAID = "/api/dispatch/v1/orders/invoice-paid";
const INVOICES = "/api/dispatch/v1/exports/invoices";
const ORDERS = "/api/dispatch/v1/exports/orders";
const TEAM_INVOICES = "/api/dispatcher/v1/exports/invoices";
const TEAM_ORDERS = "/api/dispatcher/v1/exports/orders";

let h: Harness;
let acme: string;
let acmeTest: string;
let globex: string;
let team: string;
let crew: string;
let holderId: string;
/** acme's invoices: one approved and paid, one waiting (with a description that looks like a formula). */
let paidOrder: string;
let waitingOrder: string;
let globexOrder: string;
let today: string;

const FORMULA = '=HYPERLINK("http://evil.example","Click, here")';

async function invoicedJob(key: string, reference: string, lines: unknown[]): Promise<string> {
  const id = await acceptedJob(h, key, crew, {
    trade: "plumbing",
    urgency: "urgent",
    location: { state: "CA", zip: "94103" },
    description: "Leak under the sink",
    reference_id: reference,
    nte_cents: 100_000,
  });
  for (const step of [
    { status: "en_route", eta_minutes: 10 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 30_000 },
  ]) {
    const res = await h.post(REPORT, { order_id: id, ...step }, { "x-api-key": crew });
    expect(res.statusCode, res.body).toBe(200);
  }
  const sent = await h.post(INVOICE, { order_id: id, lines }, { "x-api-key": crew });
  expect(sent.statusCode, sent.body).toBe(200);
  return id;
}

const get = (url: string, key: string) => h.get(url, { "x-api-key": key });
const range = () => `from=${today}&to=${today}`;
const csvOf = (body: string) => parse(body, { columns: true }) as Array<Record<string, string>>;

beforeAll(async () => {
  h = await createHarness();
  const c = await crewOf(h, { maxActiveJobs: 40 });
  ({ caller: acme, otherAccount: globex, dispatcher: team, holderKey: crew } = c);
  holderId = c.contractorIds[0];
  acmeTest = await h.key("acme", "test");
  paidOrder = await invoicedJob(acme, "PO-1", [
    { kind: "labour", hours: 1.5, rate_cents: 9_500, description: "Valve swap" },
    {
      kind: "materials",
      description: 'Valve, 1/2" brass',
      part_number: "CV-12",
      quantity: 2,
      unit_price_cents: 1_250,
    },
    { kind: "tax", amount_cents: 210 },
  ]);
  for (const [url, body] of [
    [DECIDE, { order_id: paidOrder, decision: "approve", version: 1 }],
    [
      PAID,
      {
        order_id: paidOrder,
        payment_reference: "ACH-0042",
        paid_on: h.services.now().toISOString().slice(0, 10),
      },
    ],
  ] as const) {
    const res = await h.post(url, body, { "x-api-key": acme });
    expect(res.statusCode, res.body).toBe(200);
  }
  waitingOrder = await invoicedJob(acme, "PO-2", [
    { kind: "other", description: FORMULA, amount_cents: 5_000 },
  ]);
  globexOrder = await invoicedJob(globex, "GX-1", [{ kind: "trip_charge", amount_cents: 4_500 }]);
  today = h.services.now().toISOString().slice(0, 10);
});
afterAll(() => h.close());

describe("an account's invoices export", () => {
  it("is its own invoices as RFC 4180 CSV, one row per line, named for its range, formulas defused", async () => {
    const res = await get(`${INVOICES}?${range()}`, acme);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(res.headers["content-disposition"]).toContain(`filename="invoices-${today}-to-${today}.csv"`);
    expect(res.body.endsWith("\r\n")).toBe(true);
    expect(res.body.replace(/\r\n/g, "").includes("\n")).toBe(false);
    const rows = csvOf(res.body);
    expect(new Set(rows.map((r) => r.order_id))).toEqual(new Set([paidOrder, waitingOrder]));
    expect(Object.keys(rows[0] ?? {})).toContain("contractor_ref");
    expect(Object.keys(rows[0] ?? {})).not.toContain("contractor_id");
    expect(res.body).not.toContain(holderId);

    const paid = rows.filter((r) => r.order_id === paidOrder);
    expect(paid.map((r) => [r.line_number, r.kind, r.amount_cents])).toEqual([
      ["1", "labour", "14250"],
      ["2", "materials", "2500"],
      ["3", "tax", "210"],
    ]);
    expect(paid[1]).toMatchObject({
      description: 'Valve, 1/2" brass',
      part_number: "CV-12",
      quantity: "2",
      unit_price_cents: "1250",
      reference_id: "PO-1",
      status: "paid",
      invoice_version: "1",
      subtotal_cents: "16750",
      tax_cents: "210",
      total_cents: "16960",
      currency: "USD",
      paid_on: today,
      payment_reference: "ACH-0042",
      contractor_ref: await h.refOf(acme, holderId),
    });
    expect(paid[0]?.approved_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // The formula comes back as text behind an apostrophe: a spreadsheet shows it, never runs it.
    const waiting = rows.find((r) => r.order_id === waitingOrder);
    expect(waiting).toMatchObject({ status: "submitted", description: `'${FORMULA}`, approved_at: "" });
  });

  it("filters by status and by date, and sees nothing of its key's other mode", async () => {
    const paid = csvOf((await get(`${INVOICES}?${range()}&status=paid`, acme)).body);
    expect(new Set(paid.map((r) => r.order_id))).toEqual(new Set([paidOrder]));
    const open = csvOf((await get(`${INVOICES}?${range()}&status=submitted,approved`, acme)).body);
    expect(new Set(open.map((r) => r.order_id))).toEqual(new Set([waitingOrder]));
    const before = await get(`${INVOICES}?from=2025-01-01&to=2025-12-31`, acme);
    expect(before.statusCode).toBe(200);
    expect(csvOf(before.body)).toEqual([]);
    expect(before.body.split("\r\n")[0]).toMatch(/^order_id,reference_id,contractor_ref,trade,status,/);
    const sandbox = await get(`${INVOICES}?${range()}`, acmeTest);
    expect(csvOf(sandbox.body)).toEqual([]);
  });

  it("writes JSON Lines: one invoice a line, with its lines and decisions", async () => {
    const res = await get(`${INVOICES}?${range()}&format=jsonl`, acme);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-ndjson");
    expect(res.headers["content-disposition"]).toContain(`invoices-${today}-to-${today}.jsonl`);
    const lines = res.body.trimEnd().split("\n");
    const invoices = lines.map((l) => JSON.parse(l));
    expect(invoices.map((i) => i.order_id).sort()).toEqual([paidOrder, waitingOrder].sort());
    const paid = invoices.find((i) => i.order_id === paidOrder);
    expect(paid).toMatchObject({
      status: "paid",
      total_cents: 16_960,
      itemised: true,
      payment_reference: "ACH-0042",
    });
    expect(paid.lines).toHaveLength(3);
    expect(paid.decisions.map((d: { decision: string }) => d.decision)).toEqual(["approved", "paid"]);
    expect(paid).not.toHaveProperty("contractor_id");
  });

  it("refuses a range backwards or over 366 days, an unknown status and format, naming the field", async () => {
    expectProblem(await get(`${INVOICES}?from=2026-11-30&to=2026-11-01`, acme), 422, "validation_failed");
    const backwards = (await get(`${INVOICES}?from=2026-11-30&to=2026-11-01`, acme)).json();
    expect(backwards.errors.map((e: { field: string }) => e.field)).toEqual(["from"]);
    const long = (await get(`${INVOICES}?from=2025-01-01&to=2026-01-02`, acme)).json();
    expect(long.status).toBe(422);
    expect(long.errors.map((e: { field: string }) => e.field)).toEqual(["to"]);
    // A year and a day of a leap year (2024) is within bounds: 366 days.
    expect((await get(`${INVOICES}?from=2024-01-01&to=2024-12-31`, acme)).statusCode).toBe(200);
    const status = (await get(`${INVOICES}?${range()}&status=paid,invoiced`, acme)).json();
    expect(status.errors.map((e: { field: string }) => e.field)).toEqual(["status"]);
    const format = (await get(`${INVOICES}?${range()}&format=xlsx`, acme)).json();
    expect(format.errors.map((e: { field: string }) => e.field)).toEqual(["format"]);
    const missing = (await get(INVOICES, acme)).json();
    expect(missing.errors.map((e: { field: string }) => e.field).sort()).toEqual(["from", "to"]);
    expectProblem(await get(`${TEAM_INVOICES}?${range()}`, acme), 403, "key_kind_not_allowed");
  });
});

describe("the dispatch team's invoices export", () => {
  it("has every account's invoices, with account and contractor ids, and filters by account", async () => {
    const rows = csvOf((await get(`${TEAM_INVOICES}?${range()}`, team)).body);
    const ids = new Set(rows.map((r) => r.order_id));
    for (const id of [paidOrder, waitingOrder, globexOrder]) expect(ids.has(id)).toBe(true);
    const globexRow = rows.find((r) => r.order_id === globexOrder);
    expect(globexRow).toMatchObject({ contractor_id: holderId, kind: "trip_charge", total_cents: "4500" });
    expect(globexRow?.account_id).toMatch(/^acct_/);
    expect(Object.keys(globexRow ?? {})).not.toContain("contractor_ref");
    const only = csvOf(
      (await get(`${TEAM_INVOICES}?${range()}&account_id=${globexRow?.account_id}`, team)).body,
    );
    expect(new Set(only.map((r) => r.order_id))).toEqual(new Set([globexOrder]));
  });
});

describe("the orders export", () => {
  it("is the account's own orders, one row each, filtered by status; the team's has every account's", async () => {
    const res = await get(`${ORDERS}?${range()}&status=invoiced,paid`, acme);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-disposition"]).toContain(`orders-${today}-to-${today}.csv`);
    const rows = csvOf(res.body);
    expect(rows.map((r) => r.order_id).sort()).toEqual([paidOrder, waitingOrder].sort());
    expect(rows.find((r) => r.order_id === paidOrder)).toMatchObject({
      reference_id: "PO-1",
      trade: "plumbing",
      urgency: "urgent",
      status: "paid",
      state: "CA",
      zip: "94103",
      final_cost_cents: "30000",
      invoice_cents: "16960",
      nte_cents: "100000",
      currency: "USD",
    });
    const jsonl = (await get(`${TEAM_ORDERS}?${range()}&format=jsonl`, team)).body.trimEnd().split("\n");
    const orders = jsonl.map((l) => JSON.parse(l));
    expect(orders.map((o) => o.order_id)).toEqual(
      expect.arrayContaining([paidOrder, waitingOrder, globexOrder]),
    );
    expect(orders.find((o) => o.order_id === globexOrder)).toMatchObject({ contractor_id: holderId });
    expect(csvOf((await get(`${ORDERS}?${range()}`, globex)).body).map((r) => r.order_id)).toEqual([
      globexOrder,
    ]);
  });
});

describe("a long export", () => {
  it("reads the store a page at a time: 2,000 invoices in pages of 500", async () => {
    const bulk = await h.services.keys.issue({ accountName: "bulk", mode: "live", actor: "operator:test" });
    const at = (i: number) => new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString();
    const orders = Array.from({ length: 2_000 }, (_, i) =>
      orderFixture({
        id: `ord_bulk${String(i).padStart(5, "0")}`,
        account_id: bulk.accountId,
        status: "invoiced",
        contractor_id: holderId,
        created_at: at(i),
        received_at: at(i),
        invoiced_at: at(i),
        invoice_cents: 1_000 + i,
      }),
    );
    await h.services.store.write(async (tx) => {
      for (const o of orders) await tx.insertOrder(o);
    });
    const db = (h.services.store as KyselyStore).db;
    for (let i = 0; i < orders.length; i += 500) {
      await db
        .insertInto("invoice_versions")
        .values(
          orders.slice(i, i + 500).map((o) => ({
            order_id: o.id,
            version: 1,
            lines: JSON.stringify([{ kind: "other", description: "Work", amount_cents: o.invoice_cents }]),
            subtotal_cents: o.invoice_cents ?? 0,
            tax_cents: 0,
            total_cents: o.invoice_cents ?? 0,
            created_at: o.invoiced_at ?? "",
            created_by: `contractor:${holderId}`,
          })),
        )
        .execute();
    }
    const reads = vi.spyOn(h.services.store.orders, "exportPage");
    const res = await get(`${INVOICES}?from=2026-10-01&to=2026-10-31`, bulk.key);
    expect(res.statusCode).toBe(200);
    // Sent as it is written: chunked, its length unknown when the first rows left.
    expect(res.headers["transfer-encoding"]).toBe("chunked");
    expect(res.headers["content-length"]).toBeUndefined();
    const rows = csvOf(res.body);
    expect(rows).toHaveLength(2_000);
    // Oldest first, none twice across the pages' boundaries.
    expect(rows.map((r) => r.order_id)).toEqual(orders.map((o) => o.id));
    expect(rows[1_999]?.total_cents).toBe("2999");
    // Four full pages, then the short (empty) one that ends it.
    expect(EXPORT_PAGE_ROWS).toBe(500);
    expect(reads).toHaveBeenCalledTimes(5);
    expect(reads.mock.calls.map(([q]) => q.limit)).toEqual([500, 500, 500, 500, 500]);
    reads.mockRestore();
  });
});
