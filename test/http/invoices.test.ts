// Itemised invoices (issue 33): the contractor's lines, the totals the service computes in integer cents,
// revisions before approval (each version sealed, an event each), and the invoice as the account, the
// contractor and the dispatch team read it with the checks an approver reads beside it. On SQLite, and on
// PostgreSQL in the postgres project.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const REPORT = "/api/contractor/v1/jobs/status";
const INVOICE = "/api/contractor/v1/jobs/invoice";
const REVISE = "/api/contractor/v1/jobs/invoice/revise";

let h: Harness;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let crew: string;
let otherCrew: string;

/** A plumbing job accepted, travelled to, worked on and completed by the crew's first plumber. */
async function completedJob(nte: number | null = 100_000): Promise<string> {
  const id = await acceptedJob(h, caller, crew, {
    trade: "plumbing",
    urgency: "urgent",
    location: { state: "CA", zip: "94103" },
    description: "Leak under the sink",
    ...(nte === null ? {} : { nte_cents: nte }),
  });
  for (const step of [
    { status: "en_route", eta_minutes: 10 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 30_000 },
  ]) {
    const res = await h.post(REPORT, { order_id: id, ...step }, { "x-api-key": crew });
    expect(res.statusCode, res.body).toBe(200);
  }
  return id;
}

const LINES = [
  { kind: "labour", description: "Repair", hours: 1.25, rate_cents: 9_999 },
  {
    kind: "materials",
    description: "Compression valve",
    part_number: "CV-12",
    quantity: 3,
    unit_price_cents: 1_333,
  },
  { kind: "trip_charge", amount_cents: 4_500 },
  { kind: "tax", amount_cents: 321 },
];
// 1.25 h x 9,999 = 12,498.75 -> 12,499; 3 x 1,333 = 3,999; + 4,500 = 20,998 subtotal; + 321 tax = 21,319.
const TOTAL = 21_319;

const readInvoice = (order: string, key: string) =>
  h.get(`/api/orders/${order}/invoice`, { "x-api-key": key });

beforeAll(async () => {
  h = await createHarness();
  ({
    caller,
    otherAccount,
    dispatcher,
    holderKey: crew,
    otherContractorKey: otherCrew,
  } = await crewOf(h, {
    maxActiveJobs: 30,
  }));
});
afterAll(() => h.close());

describe("an itemised invoice", () => {
  it("is computed by the service from its lines, sealed, and read alike by the account, the contractor and the dispatch team", async () => {
    const order = await completedJob();
    const sent = await h.post(
      INVOICE,
      { order_id: order, lines: LINES, amount_cents: TOTAL },
      { "x-api-key": crew },
    );
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().status).toBe("invoiced");

    const read = await readInvoice(order, caller);
    expect(read.statusCode, read.body).toBe(200);
    const invoice = read.json();
    expect(invoice).toMatchObject({
      order_id: order,
      status: "submitted",
      version: 1,
      itemised: true,
      subtotal_cents: 20_998,
      tax_cents: 321,
      total_cents: TOTAL,
      currency: "USD",
    });
    expect(invoice.lines.map((l: { amount_cents: number }) => l.amount_cents)).toEqual([
      12_499, 3_999, 4_500, 321,
    ]);
    expect(invoice.lines[1]).toMatchObject({ part_number: "CV-12", quantity: 3, unit_price_cents: 1_333 });
    // The version's record seals the lines the service computed, and verifies.
    const [version] = invoice.versions;
    expect(version).toMatchObject({ version: 1, total_cents: TOTAL });
    await h.services.audit.sequence(true);
    const verified = await h.get(`/api/attest/verify/${version.seal}`);
    expect(verified.statusCode, verified.body).toBe(200);
    const records = (await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": caller })).json()
      .records as Array<{ kind: string; disclosed: { lines?: unknown[]; total_cents?: number } }>;
    const sealed = records.find((r) => r.kind === "order.invoiced");
    expect(sealed?.disclosed.total_cents).toBe(TOTAL);
    expect(sealed?.disclosed.lines).toEqual(invoice.lines);
    // The order's invoice_cents is the invoice's total.
    const status = (await h.get(`/api/dispatch/v1/orders/${order}`, { "x-api-key": caller })).json();
    expect(status.invoice_cents).toBe(TOTAL);

    for (const key of [crew, dispatcher]) {
      const theirs = await readInvoice(order, key);
      expect(theirs.statusCode, theirs.body).toBe(200);
      expect(theirs.json().total_cents).toBe(TOTAL);
    }
    // Nobody else's: another account and another contractor do not learn the order exists.
    for (const key of [otherAccount, otherCrew]) {
      expectProblem(await readInvoice(order, key), 404, "not_found");
    }
  });

  it("shows the approver its checks, each with its figures", async () => {
    const order = await completedJob(15_000);
    const labour = [{ kind: "labour", hours: 1, rate_cents: 14_000 }];
    expect(
      (await h.post(INVOICE, { order_id: order, lines: labour }, { "x-api-key": crew })).statusCode,
    ).toBe(200);
    const { checks, flags } = (await readInvoice(order, caller)).json();
    const check = (code: string) => checks.find((c: { code: string }) => c.code === code);
    expect(check("within_nte")).toMatchObject({
      result: "pass",
      figures: { total_cents: 14_000, nte_in_force_cents: 15_000 },
    });
    // An hour billed for the seconds between check-in and check-out.
    expect(check("labour_hours_vs_time_on_site")).toMatchObject({
      result: "flag",
      figures: { labour_hours: 1 },
    });
    expect(check("labour_rate_vs_index").figures.highest_rate_cents).toBe(14_000);
    expect(check("labour_rate_vs_index").figures.baseline_rate_cents).toBeGreaterThan(0);
    expect(check("proof_required").result).toBe("not_applicable");
    expect(flags).toBe(checks.filter((c: { result: string }) => c.result === "flag").length);
  });

  it("keeps a total sent alone as one line, as the first API took it", async () => {
    const order = await completedJob();
    expect(
      (await h.post(INVOICE, { order_id: order, amount_cents: 12_345 }, { "x-api-key": crew })).statusCode,
    ).toBe(200);
    const invoice = (await readInvoice(order, caller)).json();
    expect(invoice).toMatchObject({ itemised: false, total_cents: 12_345, tax_cents: 0, version: 1 });
    expect(invoice.lines).toEqual([{ kind: "other", description: expect.any(String), amount_cents: 12_345 }]);
  });

  it("refuses bad lines, naming the field, and stores nothing", async () => {
    const order = await completedJob();
    const refused = async (body: Record<string, unknown>, field: string) => {
      const res = await h.post(INVOICE, { order_id: order, ...body }, { "x-api-key": crew });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(
        (problem.errors as Array<{ field: string }> | undefined)?.map((e) => e.field),
        JSON.stringify(problem),
      ).toContain(field);
    };
    await refused(
      { lines: [{ kind: "materials", description: "Pipe", quantity: -1, unit_price_cents: 100 }] },
      "lines.0.quantity",
    );
    await refused({ lines: [{ kind: "labour", hours: 0, rate_cents: 9_000 }] }, "lines.0.hours");
    await refused({ lines: [{ kind: "labour", hours: 1.333, rate_cents: 9_000 }] }, "lines.0.hours");
    await refused({ lines: [{ kind: "labour", hours: 1, rate_cents: 10_000_000 }] }, "lines.0.rate_cents");
    await refused({ lines: [{ kind: "other", amount_cents: 100 }] }, "lines.0.description");
    await refused(
      {
        lines: [
          { kind: "tax", amount_cents: 1 },
          { kind: "tax", amount_cents: 2 },
        ],
      },
      "lines",
    );
    await refused({ lines: [] }, "lines");
    await refused({}, "lines");
    // The client's total is never trusted: one that is not the lines' sum is refused, naming both.
    const res = await h.post(
      INVOICE,
      { order_id: order, lines: LINES, amount_cents: TOTAL + 1 },
      { "x-api-key": crew },
    );
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors?.[0]).toMatchObject({ field: "amount_cents" });
    expect(problem.errors?.[0]?.message).toContain(String(TOTAL));
    // Nothing was stored: the job still waits for its invoice.
    expect((await h.get(`/api/dispatch/v1/orders/${order}`, { "x-api-key": caller })).json().status).toBe(
      "completed",
    );
    expectProblem(await readInvoice(order, caller), 409, "invalid_transition");
  });

  it("is refused over the NTE in force, naming it", async () => {
    const order = await completedJob(20_000);
    const res = await h.post(INVOICE, { order_id: order, lines: LINES }, { "x-api-key": crew });
    const problem = expectProblem(res, 409, "nte_exceeded");
    expect(problem.nte_in_force_cents).toBe(20_000);
  });
});

describe("a revision", () => {
  it("is the next version, sealed, sent as an event, the order's total following it", async () => {
    const order = await completedJob();
    expect((await h.post(INVOICE, { order_id: order, lines: LINES }, { "x-api-key": crew })).statusCode).toBe(
      200,
    );
    const fewer = LINES.filter((l) => l.kind !== "trip_charge");
    const revised = await h.post(REVISE, { order_id: order, lines: fewer }, { "x-api-key": crew });
    expect(revised.statusCode, revised.body).toBe(200);
    const invoice = revised.json();
    expect(invoice).toMatchObject({ version: 2, total_cents: TOTAL - 4_500 });
    expect(
      invoice.versions.map((v: { version: number; total_cents: number }) => [v.version, v.total_cents]),
    ).toEqual([
      [1, TOTAL],
      [2, TOTAL - 4_500],
    ]);
    expect(new Set(invoice.versions.map((v: { seal: string }) => v.seal)).size).toBe(2);
    expect((await h.get(`/api/dispatch/v1/orders/${order}`, { "x-api-key": caller })).json()).toMatchObject({
      status: "invoiced",
      invoice_cents: TOTAL - 4_500,
    });
    const events = (
      await h.get("/api/events?limit=500", { "x-api-key": caller, accept: "application/json" })
    ).json().events as Array<{
      type: string;
      data: { order: { order_id: string }; invoice?: unknown };
    }>;
    const event = events.find((e) => e.type === "order.invoice_revised" && e.data.order.order_id === order);
    expect(event?.data.invoice).toEqual({
      version: 2,
      total_cents: TOTAL - 4_500,
      previous_total_cents: TOTAL,
    });
    const records = (await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": caller })).json()
      .records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
    expect(records.find((r) => r.kind === "order.invoice_revised")?.disclosed).toMatchObject({
      version: 2,
      total_cents: TOTAL - 4_500,
      previous_total_cents: TOTAL,
    });
  });

  it("is refused before the job is invoiced, over the NTE, and to another contractor", async () => {
    const order = await completedJob(25_000);
    expectProblem(
      await h.post(REVISE, { order_id: order, lines: LINES }, { "x-api-key": crew }),
      409,
      "invalid_transition",
    );
    expect((await h.post(INVOICE, { order_id: order, lines: LINES }, { "x-api-key": crew })).statusCode).toBe(
      200,
    );
    const more = [
      ...LINES.filter((l) => l.kind !== "tax"),
      { kind: "other", description: "Extra visit", amount_cents: 9_000 },
    ];
    expectProblem(
      await h.post(REVISE, { order_id: order, lines: more }, { "x-api-key": crew }),
      409,
      "nte_exceeded",
    );
    expectProblem(
      await h.post(REVISE, { order_id: order, lines: LINES }, { "x-api-key": otherCrew }),
      404,
      "not_found",
    );
    // The account and the dispatch team do not revise a contractor's invoice.
    for (const key of [caller, dispatcher]) {
      const res = await h.post(REVISE, { order_id: order, lines: LINES }, { "x-api-key": key });
      expect(res.statusCode).toBe(403);
    }
    expect((await readInvoice(order, caller)).json().version).toBe(1);
  });
});
