// From invoiced to paid (issue 33): the account's keys and their roles, approval within an approver's
// limit, rejection with a reason code, revision requests and the contractor's revision after them, the
// version a decision names, payment with a reference and a date, and the account's auto-approval policy.
// Every transition and refusal, on SQLite and, in the postgres project, on PostgreSQL.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const REPORT = "/api/contractor/v1/jobs/status";
const INVOICE = "/api/contractor/v1/jobs/invoice";
const REVISE = "/api/contractor/v1/jobs/invoice/revise";
const DECIDE = "/api/dispatch/v1/orders/invoice-decision";
const PAID = "/api/dispatch/v1/orders/invoice-paid";
const POLICY = "/api/dispatch/v1/invoice-policy";
const KEYS = "/api/dispatch/v1/keys";
const KEY_ROLE = "/api/dispatch/v1/keys/role";
const NTE_DECISION = "/api/dispatch/v1/orders/nte-decision";

let h: Harness;
let admin: string;
let otherAccount: string;
let crew: string;
let requester: { id: string; key: string };
let approver: { id: string; key: string };

const issue = (role: "requester" | "approver" | "admin", approvalLimitCents: number | null = null) =>
  h.services.keys.issue({
    accountName: "acme",
    mode: "live",
    actor: "operator:test",
    role,
    approvalLimitCents,
  });

/** A plumbing job of acme's accepted, worked on and completed by the crew's first plumber. */
async function completedJob(): Promise<string> {
  const id = await acceptedJob(h, admin, crew, {
    trade: "plumbing",
    urgency: "urgent",
    location: { state: "CA", zip: "94103" },
    description: "Leak under the sink",
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
  return id;
}

/** Materials and a trip charge: no labour to check against the time on site, nothing flagged. */
const CLEAN = [
  { kind: "materials", description: "Compression valve", quantity: 2, unit_price_cents: 1_250 },
  { kind: "trip_charge", amount_cents: 4_500 },
];
const CLEAN_TOTAL = 7_000;

async function invoicedJob(lines: unknown[] = CLEAN): Promise<string> {
  const order = await completedJob();
  const sent = await h.post(INVOICE, { order_id: order, lines }, { "x-api-key": crew });
  expect(sent.statusCode, sent.body).toBe(200);
  return order;
}

const decide = (key: string, body: Record<string, unknown>) => h.post(DECIDE, body, { "x-api-key": key });
const invoiceOf = async (order: string) =>
  (await h.get(`/api/orders/${order}/invoice`, { "x-api-key": admin })).json();
const statusOf = async (order: string) =>
  (await h.get(`/api/dispatch/v1/orders/${order}`, { "x-api-key": admin })).json().status;
const today = () => h.services.now().toISOString().slice(0, 10);

async function eventsOf(order: string) {
  const events = (
    await h.get("/api/events?limit=500", { "x-api-key": admin, accept: "application/json" })
  ).json().events as Array<{ type: string; data: { order: { order_id: string }; invoice?: unknown } }>;
  return events.filter((e) => e.data.order.order_id === order);
}

async function recordsOf(order: string) {
  return (await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": admin })).json()
    .records as Array<{ kind: string; actor?: string; disclosed: Record<string, unknown> }>;
}

beforeAll(async () => {
  h = await createHarness();
  ({ caller: admin, otherAccount, holderKey: crew } = await crewOf(h, { maxActiveJobs: 40 }));
  requester = await issue("requester");
  approver = await issue("approver", 5_000);
});
afterAll(() => h.close());

describe("approving an invoice", () => {
  it("takes an approver within its limit: a requester is refused, an approver above its limit too, naming it", async () => {
    const order = await invoicedJob();
    const byRequester = expectProblem(
      await decide(requester.key, { order_id: order, decision: "approve", version: 1 }),
      403,
      "key_role_not_allowed",
    );
    expect(byRequester).toMatchObject({ role: "requester", required_role: "approver" });
    const above = expectProblem(
      await decide(approver.key, { order_id: order, decision: "approve", version: 1 }),
      403,
      "approval_limit_exceeded",
    );
    expect(above).toMatchObject({ approval_limit_cents: 5_000, total_cents: CLEAN_TOTAL });
    expect(await statusOf(order)).toBe("invoiced");

    const approved = await decide(admin, { order_id: order, decision: "approve", version: 1 });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ status: "approved", version: 1, total_cents: CLEAN_TOTAL });
    expect(approved.json().decisions).toEqual([
      expect.objectContaining({ decision: "approved", version: 1, by_policy: false, reason_code: null }),
    ]);
    expect(await statusOf(order)).toBe("approved");
    // Approving twice: the invoice no longer waits for a decision.
    expectProblem(
      await decide(admin, { order_id: order, decision: "approve", version: 1 }),
      409,
      "invalid_transition",
    );
    // The contractor cannot revise an approved invoice.
    expectProblem(
      await h.post(REVISE, { order_id: order, lines: CLEAN }, { "x-api-key": crew }),
      409,
      "invalid_transition",
    );
    const sealed = (await recordsOf(order)).find((r) => r.kind === "order.invoice_decided");
    expect(sealed?.disclosed).toMatchObject({ decision: "approved", version: 1, total_cents: CLEAN_TOTAL });
    const event = (await eventsOf(order)).find((e) => e.type === "order.approved");
    expect(event?.data.invoice).toMatchObject({ version: 1, total_cents: CLEAN_TOTAL, decision: "approved" });
  });

  it("lets an approver approve within its limit, and refuses another account's order and an order not invoiced", async () => {
    const small = await invoicedJob([{ kind: "trip_charge", amount_cents: 4_500 }]);
    const ok = await decide(approver.key, { order_id: small, decision: "approve" });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().status).toBe("approved");

    const order = await invoicedJob();
    expectProblem(await decide(otherAccount, { order_id: order, decision: "approve" }), 404, "not_found");
    const completed = await completedJob();
    const early = expectProblem(
      await decide(admin, { order_id: completed, decision: "approve" }),
      409,
      "invalid_transition",
    );
    expect(early.detail).toMatch(/completed.*not invoiced it yet/);
  });
});

describe("rejecting and sending back", () => {
  it("rejects with a reason code, takes the contractor's revision, sends it back with a note, and refuses a stale version", async () => {
    const order = await invoicedJob();
    const noCode = expectProblem(
      await decide(admin, { order_id: order, decision: "reject" }),
      422,
      "validation_failed",
    );
    expect(noCode.errors.map((e: { field: string }) => e.field)).toEqual(["reason_code"]);
    const otherNoNote = expectProblem(
      await decide(admin, { order_id: order, decision: "reject", reason_code: "other" }),
      422,
      "validation_failed",
    );
    expect(otherNoNote.errors.map((e: { field: string }) => e.field)).toEqual(["note"]);
    expectProblem(
      await decide(admin, { order_id: order, decision: "reject", reason_code: "made_up" }),
      422,
      "validation_failed",
    );

    const rejected = await decide(admin, {
      order_id: order,
      decision: "reject",
      reason_code: "pricing_disagreement",
      note: "The valve is $9 at any store.",
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({ status: "rejected" });
    expect(await statusOf(order)).toBe("invoice_rejected");
    // Paying a rejected invoice is refused.
    expectProblem(
      await h.post(
        PAID,
        { order_id: order, payment_reference: "X1", paid_on: today() },
        { "x-api-key": admin },
      ),
      409,
      "invalid_transition",
    );

    // The contractor sees the reason and revises: invoiced again, version 2.
    const theirs = (await h.get(`/api/orders/${order}/invoice`, { "x-api-key": crew })).json();
    expect(theirs.decisions[0]).toMatchObject({
      decision: "rejected",
      reason_code: "pricing_disagreement",
      note: "The valve is $9 at any store.",
      decided_by: null,
    });
    const revised = await h.post(
      REVISE,
      {
        order_id: order,
        lines: [{ kind: "materials", description: "Valve", quantity: 2, unit_price_cents: 900 }],
      },
      { "x-api-key": crew },
    );
    expect(revised.statusCode, revised.body).toBe(200);
    expect(revised.json()).toMatchObject({ status: "submitted", version: 2, total_cents: 1_800 });
    expect(await statusOf(order)).toBe("invoiced");

    // A revision request needs a note; with one, the contractor revises again.
    const noNote = expectProblem(
      await decide(admin, { order_id: order, decision: "request_revision" }),
      422,
      "validation_failed",
    );
    expect(noNote.errors.map((e: { field: string }) => e.field)).toEqual(["note"]);
    const sentBack = await decide(admin, {
      order_id: order,
      decision: "request_revision",
      version: 2,
      note: "Add the part number.",
    });
    expect(sentBack.statusCode, sentBack.body).toBe(200);
    expect(await statusOf(order)).toBe("revision_requested");
    const v3 = await h.post(
      REVISE,
      {
        order_id: order,
        lines: [
          {
            kind: "materials",
            description: "Valve",
            part_number: "CV-9",
            quantity: 2,
            unit_price_cents: 900,
          },
        ],
      },
      { "x-api-key": crew },
    );
    expect(v3.statusCode, v3.body).toBe(200);

    // Deciding the version read before the revision: refused, naming the latest.
    const stale = expectProblem(
      await decide(admin, { order_id: order, decision: "approve", version: 2 }),
      409,
      "invoice_changed",
    );
    expect(stale).toMatchObject({ version: 3, total_cents: 1_800 });
    const approved = await decide(admin, { order_id: order, decision: "approve", version: 3 });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(
      approved.json().decisions.map((d: { decision: string; version: number }) => [d.decision, d.version]),
    ).toEqual([
      ["rejected", 1],
      ["revision_requested", 2],
      ["approved", 3],
    ]);
    const types = (await eventsOf(order)).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["order.invoice_rejected", "order.revision_requested", "order.approved"]),
    );
  });
});

describe("the contractor's invoiced jobs", () => {
  it("lists with status=invoiced the jobs whose invoice waits for a decision or was sent back, not the approved", async () => {
    const jobsOf = async (status: string) =>
      (
        (await h.get(`/api/contractor/v1/jobs?status=${status}`, { "x-api-key": crew })).json()
          .jobs as Array<{
          order_id: string;
          status: string;
        }>
      ).map((j) => j.order_id);
    const waiting = await invoicedJob();
    const returned = await invoicedJob();
    const approved = await invoicedJob();
    const back = await decide(admin, {
      order_id: returned,
      decision: "request_revision",
      version: 1,
      note: "Split the valves",
    });
    expect(back.statusCode, back.body).toBe(200);
    const ok = await decide(admin, { order_id: approved, decision: "approve", version: 1 });
    expect(ok.statusCode, ok.body).toBe(200);
    const invoiced = await jobsOf("invoiced");
    expect(invoiced).toEqual(expect.arrayContaining([waiting, returned]));
    expect(invoiced).not.toContain(approved);
    expect(await jobsOf("completed")).not.toContain(waiting);
    expectProblem(
      await h.get("/api/contractor/v1/jobs?status=paid", { "x-api-key": crew }),
      422,
      "validation_failed",
    );
  });
});

describe("paying", () => {
  it("records a payment of an approved invoice with its reference and date, once", async () => {
    const order = await invoicedJob();
    const unapproved = expectProblem(
      await h.post(
        PAID,
        { order_id: order, payment_reference: "ACH-1", paid_on: today() },
        { "x-api-key": admin },
      ),
      409,
      "invalid_transition",
    );
    expect(unapproved.current_status).toBe("invoiced");
    await decide(admin, { order_id: order, decision: "approve" });
    expectProblem(
      await h.post(
        PAID,
        { order_id: order, payment_reference: "ACH-1", paid_on: today() },
        { "x-api-key": requester.key },
      ),
      403,
      "key_role_not_allowed",
    );
    for (const [paidOn, message] of [
      ["2026-13-01", /YYYY-MM-DD/],
      ["2026/11/27", /YYYY-MM-DD/],
      ["2999-01-01", /future/],
      ["2000-01-01", /before the invoice was approved/],
    ] as const) {
      const bad = expectProblem(
        await h.post(
          PAID,
          { order_id: order, payment_reference: "ACH-1", paid_on: paidOn },
          { "x-api-key": admin },
        ),
        422,
        "validation_failed",
      );
      expect(bad.errors).toEqual([{ field: "paid_on", message: expect.stringMatching(message) }]);
    }
    const paid = await h.post(
      PAID,
      { order_id: order, payment_reference: "ACH-2026-11-0042", paid_on: today() },
      { "x-api-key": approver.key },
    );
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().status).toBe("paid");
    expect(paid.json().decisions.at(-1)).toMatchObject({
      decision: "paid",
      payment_reference: "ACH-2026-11-0042",
      paid_on: today(),
      total_cents: CLEAN_TOTAL,
    });
    expect(await statusOf(order)).toBe("paid");
    expectProblem(
      await h.post(
        PAID,
        { order_id: order, payment_reference: "ACH-again", paid_on: today() },
        { "x-api-key": admin },
      ),
      409,
      "invalid_transition",
    );
    const sealed = (await recordsOf(order)).find((r) => r.kind === "order.invoice_paid");
    expect(sealed?.disclosed).toMatchObject({ payment_reference: "ACH-2026-11-0042", paid_on: today() });
    const event = (await eventsOf(order)).find((e) => e.type === "order.paid");
    expect(event?.data.invoice).toMatchObject({ payment_reference: "ACH-2026-11-0042", paid_on: today() });
    // Paid work still counts as work done: the service report stays available.
    const report = await h.get(`/api/orders/${order}/report`, { "x-api-key": admin });
    expect(report.statusCode).toBe(200);
  });
});

describe("the account's invoice policy", () => {
  it("auto-approves a clean invoice below its amount, and leaves a flagged or larger one for a person", async () => {
    expectProblem(
      await h.post(POLICY, { auto_approve_below_cents: 10_000 }, { "x-api-key": approver.key }),
      403,
      "key_role_not_allowed",
    );
    const set = await h.post(POLICY, { auto_approve_below_cents: 10_000 }, { "x-api-key": admin });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ auto_approve_below_cents: 10_000 });
    expect(set.json().record.kind).toBe("account.invoice_policy_set");
    expect((await h.get(POLICY, { "x-api-key": requester.key })).json().auto_approve_below_cents).toBe(
      10_000,
    );

    const clean = await invoicedJob();
    expect(await statusOf(clean)).toBe("approved");
    const invoice = await invoiceOf(clean);
    expect(invoice.decisions).toEqual([
      expect.objectContaining({ decision: "approved", by_policy: true, decided_by: null }),
    ]);
    const sealed = (await recordsOf(clean)).find((r) => r.kind === "order.invoice_decided");
    expect(sealed?.disclosed).toMatchObject({ policy: { auto_approve_below_cents: 10_000, flags: 0 } });

    // Five hours of labour on a job checked out minutes after check-in: flagged, so a person decides.
    const flagged = await invoicedJob([
      { kind: "labour", hours: 0.5, rate_cents: 9_000 },
      ...CLEAN.slice(1),
      { kind: "labour", hours: 5, rate_cents: 100 },
    ]);
    expect(await statusOf(flagged)).toBe("invoiced");
    expect((await invoiceOf(flagged)).flags).toBeGreaterThan(0);
    const large = await invoicedJob([{ kind: "trip_charge", amount_cents: 10_000 }]);
    expect(await statusOf(large)).toBe("invoiced");

    await h.post(POLICY, { auto_approve_below_cents: null }, { "x-api-key": admin });
    const after = await invoicedJob();
    expect(await statusOf(after)).toBe("invoiced");
  });
});

describe("keys and their roles", () => {
  it("lists the account's keys with their roles and lets an admin set them, keeping one admin", async () => {
    expectProblem(await h.get(KEYS, { "x-api-key": approver.key }), 403, "key_role_not_allowed");
    const listed = await h.get(KEYS, { "x-api-key": admin });
    expect(listed.statusCode, listed.body).toBe(200);
    const keys = listed.json().keys as Array<{
      id: string;
      role: string;
      approval_limit_cents: number | null;
    }>;
    expect(keys.find((k) => k.id === requester.id)).toMatchObject({
      role: "requester",
      approval_limit_cents: null,
    });
    expect(keys.find((k) => k.id === approver.id)).toMatchObject({
      role: "approver",
      approval_limit_cents: 5_000,
    });
    expect(JSON.stringify(listed.json())).not.toMatch(/fsd_live_[0-9A-Za-z]{36}/);

    const promoted = await h.post(
      KEY_ROLE,
      { key_id: requester.id, role: "approver", approval_limit_cents: 20_000 },
      { "x-api-key": admin },
    );
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect(promoted.json()).toMatchObject({ role: "approver", approval_limit_cents: 20_000 });
    // In force at once in this process: the promoted key now approves within its new limit.
    const order = await invoicedJob();
    const ok = await decide(requester.key, { order_id: order, decision: "approve" });
    expect(ok.statusCode, ok.body).toBe(200);
    const back = await h.post(KEY_ROLE, { key_id: requester.id, role: "requester" }, { "x-api-key": admin });
    expect(back.statusCode, back.body).toBe(200);

    const limitWithoutApprover = expectProblem(
      await h.post(
        KEY_ROLE,
        { key_id: requester.id, role: "admin", approval_limit_cents: 1 },
        { "x-api-key": admin },
      ),
      422,
      "validation_failed",
    );
    expect(limitWithoutApprover.errors[0].field).toBe("approval_limit_cents");
    expectProblem(
      await h.post(KEY_ROLE, { key_id: "key_nope", role: "admin" }, { "x-api-key": admin }),
      404,
      "not_found",
    );

    // Another account's only key is its last admin: it cannot demote itself.
    const solo = await h.services.keys.issue({
      accountName: "initech",
      mode: "live",
      actor: "operator:test",
    });
    const last = expectProblem(
      await h.post(KEY_ROLE, { key_id: solo.id, role: "requester" }, { "x-api-key": solo.key }),
      422,
      "validation_failed",
    );
    expect(last.errors[0]).toMatchObject({ field: "role", message: expect.stringMatching(/last admin/) });
    // Nor does an admin of one account reach another's key.
    expectProblem(
      await h.post(KEY_ROLE, { key_id: solo.id, role: "requester" }, { "x-api-key": admin }),
      404,
      "not_found",
    );
    const records = (await h.get("/api/audit?limit=200", { "x-api-key": admin })).json().records as Array<{
      kind: string;
      disclosed: Record<string, unknown>;
    }>;
    expect(records.filter((r) => r.kind === "key.role_set").map((r) => r.disclosed.role)).toEqual(
      expect.arrayContaining(["approver", "requester"]),
    );
  });

  it("takes an approver for an NTE decision, within its limit", async () => {
    const id = await acceptedJob(h, admin, crew, {
      trade: "plumbing",
      urgency: "urgent",
      location: { state: "CA", zip: "94103" },
      description: "Leak under the sink",
      nte_cents: 20_000,
    });
    const asked = await h.post(
      "/api/contractor/v1/jobs/nte-request",
      { order_id: id, requested_nte_cents: 60_000, reason: "corroded pipe" },
      { "x-api-key": crew },
    );
    expect(asked.statusCode, asked.body).toBe(200);
    const body = { order_id: id, request_id: asked.json().request_id, decision: "approve" };
    expectProblem(
      await h.post(NTE_DECISION, body, { "x-api-key": requester.key }),
      403,
      "key_role_not_allowed",
    );
    const above = expectProblem(
      await h.post(NTE_DECISION, body, { "x-api-key": approver.key }),
      403,
      "approval_limit_exceeded",
    );
    expect(above).toMatchObject({ approval_limit_cents: 5_000, requested_cents: 60_000 });
    const ok = await h.post(NTE_DECISION, body, { "x-api-key": admin });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
