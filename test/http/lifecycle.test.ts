// The work order's life through the HTTP API: offers and the cascade (decline, expiry, exhaustion),
// deadlines kept in the store, the contractor's answers and progress, the caller's cancellation, what a
// contractor may see, and the sandbox's simulated contractors.

import { afterEach, describe, expect, it } from "vitest";
import { SANDBOX_AUTO_APPROVE_BELOW_CENTS, SANDBOX_COUNTER_WITHIN_PCT } from "../../src/bootstrap.js";
import type { Order } from "../../src/domain/orders/order.js";
import { MAX_OFFERS } from "../../src/domain/orders/policy.js";
import type { Services } from "../../src/operations/kernel/operation.js";
import { sandboxCounterPrice } from "../../src/sim/sandbox-counter.js";
import { SANDBOX_MARKERS, SANDBOX_STEP_MS, SandboxPlayer } from "../../src/sim/sandbox-player.js";
import { OfferSweeper } from "../../src/workers/offer-sweeper.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { pdfText } from "../helpers/pdf-text.js";

const OFFERS = "/api/contractor/v1/offers";
const ACCEPT = "/api/contractor/v1/offers/accept";
const DECLINE = "/api/contractor/v1/offers/decline";
const JOBS = "/api/contractor/v1/jobs";
const REPORT = "/api/contractor/v1/jobs/status";
const CANCEL = "/api/dispatch/v1/orders/cancel";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
  reference_id: "WO-77",
};

/** What a server's background work does in one round at `now`: expire due offers, then play the sandbox's
 * simulated contractors (unless `sandbox` is false). */
function background(services: Services, options: { now?: () => Date; sandbox?: boolean } = {}) {
  const at = options.now ? { ...services, now: options.now } : services;
  return {
    async tick() {
      await new OfferSweeper(at).tick();
      if (options.sandbox !== false) await new SandboxPlayer(at).tick();
    },
  };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** A harness with `n` live plumbers in CA, their ids, a caller key and a contractor key per plumber. */
async function setup(n = MAX_OFFERS + 1) {
  const h = await createHarness();
  open.push(h);
  const ids = Array.from({ length: n }, (_, i) => `ctr_live${i}${Math.random().toString(36).slice(2, 8)}`);
  await h.services.store.contractors.insert(
    ids.map((id, i) => liveContractor({ id, rating: 4.9 - i * 0.2, maxActiveJobs: 3 })),
    testRecord(),
  );
  await h.services.pool.load();
  const caller = await h.key("acme", "live");
  const keys = new Map<string, string>();
  for (const id of ids) {
    const issued = await h.services.keys.issue({
      accountName: "crew",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: id,
    });
    keys.set(id, issued.key);
  }
  return { h, ids, caller, keys };
}

async function order(h: Harness, key: string, body: Record<string, unknown> = JOB) {
  const res = await h.post(ORDER_PATH, body, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { order_id: string; status: string; contractor_ref: string | null };
}

async function holder(h: Harness, orderId: string): Promise<string | null> {
  return (await h.services.store.orders.byIds([orderId]))[0]?.contractor_id ?? null;
}

async function pendingOffer(h: Harness, key: string, orderId: string) {
  const res = await h.get(OFFERS, { "x-api-key": key });
  expect(res.statusCode).toBe(200);
  return (res.json().offers as Array<Record<string, unknown>>).find((o) => o.order_id === orderId);
}

/** What the sandbox account's invoice policy must have made of the sandbox's invoice of a job: approved
 * when no check flagged it and it is below the policy's amount, else still invoiced. */
async function sandboxPolicyOutcome(h: Harness, orderId: string) {
  const invoice = (await h.get(`/api/orders/${orderId}/invoice`, { "x-api-key": h.sandboxKey })).json();
  expect(invoice.itemised).toBe(true);
  const clean = invoice.flags === 0 && invoice.total_cents < SANDBOX_AUTO_APPROVE_BELOW_CENTS;
  return { status: clean ? "approved" : "invoiced", invoice };
}

async function kinds(h: Harness, key: string, orderId: string): Promise<string[]> {
  const res = await h.get(`/api/audit?order_id=${orderId}&limit=200`, { "x-api-key": key });
  return (res.json().records as Array<{ kind: string }>).map((r) => r.kind);
}

async function activeJobs(h: Harness): Promise<number> {
  return (await h.services.store.contractors.activeJobCounts()).reduce((sum, [, n]) => sum + n, 0);
}

describe("offers and the cascade", () => {
  it("offers the job to the best contractor, moves down the ranking on a decline, and hands it to a dispatcher when the tries run out", async () => {
    const { h, caller, keys } = await setup();
    const created = await order(h, caller);
    expect(created.status).toBe("offered");
    const tried: string[] = [];
    for (let i = 0; i < MAX_OFFERS; i++) {
      const current = (await holder(h, created.order_id)) as string;
      expect(tried).not.toContain(current);
      tried.push(current);
      const offer = await pendingOffer(h, keys.get(current) as string, created.order_id);
      expect(offer?.attempt).toBe(i + 1);
      const res = await h.post(
        DECLINE,
        { offer_id: offer?.offer_id, reason: "booked" },
        { "x-api-key": keys.get(current) as string },
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    const after = (
      await h.get(`/api/dispatch/v1/orders/${created.order_id}`, { "x-api-key": caller })
    ).json();
    expect(after.status).toBe("needs_dispatcher");
    expect(after.contractor_ref).toBeNull();
    expect(await activeJobs(h)).toBe(0); // every declined offer gave its capacity back
    const trail = await kinds(h, caller, created.order_id);
    expect(trail.filter((k) => k === "order.offer_declined")).toHaveLength(MAX_OFFERS);
    expect(trail.filter((k) => k === "order.offered")).toHaveLength(MAX_OFFERS - 1);
    expect(trail).toContain("order.needs_dispatcher");
  });

  it("expires an unanswered offer from the store's deadline, exactly once even with two sweepers, after a restart", async () => {
    const { h, caller } = await setup();
    const created = await order(h, caller);
    const first = await holder(h, created.order_id);
    // Nothing is due yet.
    await background(h.services).tick();
    expect(await holder(h, created.order_id)).toBe(first);
    // Two fresh sweepers (as after a restart: nothing in memory), an hour later, at once.
    const later = () => new Date(Date.now() + 2 * 3_600_000);
    const a = background(h.services, { now: later });
    const b = background(h.services, { now: later });
    await Promise.all([a.tick(), b.tick()]);
    const second = await holder(h, created.order_id);
    expect(second).not.toBe(first);
    const trail = await kinds(h, caller, created.order_id);
    expect(trail.filter((k) => k === "order.offer_expired")).toHaveLength(1);
    expect(trail.filter((k) => k === "order.offered")).toHaveLength(1);
    expect(await activeJobs(h)).toBe(1);
  });
});

describe("the contractor's side", () => {
  it("accepts, reports en route, on site and completed; out-of-order reports answer 409 naming the status", async () => {
    const { h, caller, keys } = await setup();
    const created = await order(h, caller);
    const contractor = (await holder(h, created.order_id)) as string;
    const key = keys.get(contractor) as string;
    const offer = await pendingOffer(h, key, created.order_id);
    // What a contractor sees of the caller: only what the job needs.
    expect(offer).not.toHaveProperty("reference_id");
    expect(offer).not.toHaveProperty("account_id");
    expect(offer).not.toHaveProperty("callback_url");
    expect(offer).not.toHaveProperty("address");
    const accepted = await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": key });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ status: "accepted", address: "1 Market St" });

    const early = await h.post(
      REPORT,
      { order_id: created.order_id, status: "completed", final_cost_cents: 100 },
      { "x-api-key": key },
    );
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ code: "invalid_transition", current_status: "accepted" });
    expect(early.json().detail).toMatch(/The order is accepted/);

    const jobs = (await h.get(JOBS, { "x-api-key": key })).json().jobs;
    expect(jobs.map((j: { order_id: string }) => j.order_id)).toContain(created.order_id);
    for (const report of [
      { status: "en_route", eta_minutes: 30 },
      { status: "on_site" },
      { status: "completed", final_cost_cents: 18_500 },
    ]) {
      const res = await h.post(REPORT, { order_id: created.order_id, ...report }, { "x-api-key": key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe(report.status);
    }
    const done = (await h.get(`/api/dispatch/v1/orders/${created.order_id}`, { "x-api-key": caller })).json();
    expect(done).toMatchObject({ status: "completed", final_cost_cents: 18_500 });
    expect(await activeJobs(h)).toBe(0);
    // Accepting again: the offer is settled.
    expect((await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": key })).statusCode).toBe(409);
  });

  it("keeps contractors to their own offers and jobs, and callers out of the contractor's operations", async () => {
    const { h, caller, keys, ids } = await setup();
    const created = await order(h, caller);
    const holderId = (await holder(h, created.order_id)) as string;
    const stranger = keys.get(ids.find((id) => id !== holderId) as string) as string;
    const offer = await pendingOffer(h, keys.get(holderId) as string, created.order_id);
    expect(await pendingOffer(h, stranger, created.order_id)).toBeUndefined();
    expect((await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": stranger })).statusCode).toBe(
      404,
    );
    expect((await h.post(DECLINE, { offer_id: offer?.offer_id }, { "x-api-key": stranger })).statusCode).toBe(
      404,
    );
    const report = await h.post(
      REPORT,
      { order_id: created.order_id, status: "on_site" },
      { "x-api-key": stranger },
    );
    expect(report.statusCode).toBe(404);
    for (const path of [OFFERS, JOBS]) {
      const res = await h.get(path, { "x-api-key": caller });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("key_kind_not_allowed");
    }
    expect((await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": caller })).statusCode).toBe(
      403,
    );
    expect((await h.post(CANCEL, { order_id: created.order_id }, { "x-api-key": stranger })).statusCode).toBe(
      403,
    );
  });
});

describe("the caller's cancellation", () => {
  it("cancels before the contractor is on site, withdrawing the offer and its capacity; not after", async () => {
    const { h, caller, keys } = await setup();
    const early = await order(h, caller);
    const offered = (await holder(h, early.order_id)) as string;
    expect(h.services.pool.index.jobsOf(offered)).toBe(1);
    const res = await h.post(
      CANCEL,
      { order_id: early.order_id, reason: "fixed it" },
      { "x-api-key": caller },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: "cancelled", status_reason: "fixed it" });
    expect(await activeJobs(h)).toBe(0);
    expect(h.services.pool.index.jobsOf(offered)).toBe(0); // this process's index too
    expect(
      (await h.post(CANCEL, { order_id: early.order_id }, { "x-api-key": caller })).json(),
    ).toMatchObject({
      code: "invalid_transition",
      current_status: "cancelled",
    });

    const late = await order(h, caller);
    const contractor = (await holder(h, late.order_id)) as string;
    const key = keys.get(contractor) as string;
    const offer = await pendingOffer(h, key, late.order_id);
    await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": key });
    await h.post(
      REPORT,
      { order_id: late.order_id, status: "en_route", eta_minutes: 5 },
      { "x-api-key": key },
    );
    await h.post(REPORT, { order_id: late.order_id, status: "on_site" }, { "x-api-key": key });
    const refused = await h.post(CANCEL, { order_id: late.order_id }, { "x-api-key": caller });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().current_status).toBe("on_site");
    const other = await h.key("someone-else", "live");
    expect((await h.post(CANCEL, { order_id: late.order_id }, { "x-api-key": other })).statusCode).toBe(404);
  });
});

describe("sandbox", () => {
  it("plays the whole lifecycle with simulated contractors, and forces a decline or silence on request", async () => {
    const h = await createHarness();
    open.push(h);
    const at = (steps: number) => () => new Date(Date.now() + steps * (SANDBOX_STEP_MS + 500));
    // The sandbox account's own checklist for plumbing: the simulated contractor answers it, a photo item
    // with the photo it adds.
    const template = await h.post(
      "/api/checklist-templates",
      {
        trade: "plumbing",
        name: "Leak visit",
        items: [
          { kind: "yes_no", label: "Water shut off", required: true },
          { kind: "photo", label: "Repaired joint", required: true },
        ],
      },
      { "x-api-key": h.sandboxKey },
    );
    expect(template.statusCode, template.body).toBe(200);
    const normal = await order(h, h.sandboxKey, { ...JOB, description: "Leak under the sink" });
    const played0 = (await h.services.store.orders.byIds([normal.order_id]))[0];
    const declined = await order(h, h.sandboxKey, { ...JOB, description: `Leak ${SANDBOX_MARKERS.decline}` });
    const silent = await order(h, h.sandboxKey, { ...JOB, description: `Leak ${SANDBOX_MARKERS.noAnswer}` });
    const seen: string[] = [];
    for (let step = 1; step <= 5; step++) {
      await background(h.services, { now: at(step) }).tick();
      seen.push((await h.services.store.orders.byIds([normal.order_id]))[0]?.status as string);
    }
    // Invoiced with lines; the sandbox account's policy then approves it at once when nothing is flagged
    // and it is below its amount, else it waits for a person.
    const policy = await sandboxPolicyOutcome(h, normal.order_id);
    expect(seen).toEqual(["accepted", "en_route", "on_site", "completed", policy.status]);
    // Now and then the sandbox's contractor counters (8 % above the estimate), which the sandbox account's
    // policy accepts at once.
    const countered = (await h.services.store.orders.byIds([normal.order_id]))[0]?.agreed_price_cents != null;
    expect(countered).toBe(
      sandboxCounterPrice(
        { ...(played0 as Order), status: "offered" },
        { auto_accept_within_pct: SANDBOX_COUNTER_WITHIN_PCT },
      ) !== null,
    );
    expect(await kinds(h, h.sandboxKey, normal.order_id)).toEqual([
      "order.created",
      "order.matched",
      ...(countered ? ["order.countered", "order.counter_accepted"] : ["order.accepted"]),
      "order.status_changed",
      "order.status_changed",
      "order.attachment_added",
      "order.attachment_added",
      // The sandbox's starter plumbing checklist (4 items), then the account's own (2).
      ...Array(6).fill("order.checklist_answered"),
      "order.status_changed",
      "order.invoiced",
      ...(policy.status === "approved" ? ["order.invoice_decided"] : []),
    ]);
    // The proof a contractor leaves: checked in near the site, a photo and the site contact's signature,
    // and the service report that prints them.
    const played = (await h.services.store.orders.byIds([normal.order_id]))[0];
    expect(played?.check_in).toMatchObject({ site_point: { source: "zip" } });
    expect(played?.check_in?.position).not.toBeNull();
    const files = (
      await h.get(`/api/orders/${normal.order_id}/attachments`, { "x-api-key": h.sandboxKey })
    ).json().attachments as Array<{ kind: string; uploaded_by: string; signer_name: string | null }>;
    expect(files.map((f) => [f.kind, f.uploaded_by])).toEqual([
      ["photo", "contractor"],
      ["signature", "contractor"],
    ]);
    expect(files[1]?.signer_name).toMatch(/\w+ \w+/);
    const report = await h.get(`/api/orders/${normal.order_id}/report`, { "x-api-key": h.sandboxKey });
    expect(report.statusCode).toBe(200);
    expect(report.headers["content-type"]).toBe("application/pdf");
    const printed = await pdfText(report.rawPayload);
    expect(printed).toContain("Leak stopped");
    expect(printed).toContain("Water shut off");
    expect(printed).toContain("Repaired joint");
    expect(printed).toContain(files[1]?.signer_name as string);
    expect(await kinds(h, h.sandboxKey, declined.order_id)).toContain("order.offer_declined");
    // Silence: nobody answers, until the sandbox's 20 s offer window has passed.
    const silentKinds = () => kinds(h, h.sandboxKey, silent.order_id);
    expect(await silentKinds()).toEqual(["order.created", "order.matched"]);
    await background(h.services, { now: () => new Date(Date.now() + 25_000) }).tick();
    expect(await silentKinds()).toContain("order.offer_expired");
  });
});

describe("sandbox checklists", () => {
  it("ends the tour's order (no template of the user's) with the starter checklist answered, in its report", async () => {
    const h = await createHarness();
    open.push(h);
    // The README tour's order, with the sandbox key and nothing else set up.
    const tour = await order(h, h.sandboxKey, {
      trade: "plumbing",
      location: { state: "CA", zip: "90012", address: "200 N Spring St" },
      urgency: "emergency",
      description: "Burst pipe under the kitchen sink, water on the floor",
    });
    const at = (steps: number) => () => new Date(Date.now() + steps * (SANDBOX_STEP_MS + 500));
    for (let step = 1; step <= 4; step++) await background(h.services, { now: at(step) }).tick();
    expect((await h.services.store.orders.byIds([tour.order_id]))[0]?.status).toBe("completed");
    const checklist = (
      await h.get(`/api/orders/${tour.order_id}/checklist`, { "x-api-key": h.sandboxKey })
    ).json();
    const files = (
      await h.get(`/api/orders/${tour.order_id}/attachments`, { "x-api-key": h.sandboxKey })
    ).json().attachments as Array<{ attachment_id: string; kind: string }>;
    const photo = files.find((f) => f.kind === "photo")?.attachment_id;
    expect(files.map((f) => f.kind)).toEqual(["photo", "signature"]);
    expect(checklist.fixed_at).not.toBeNull();
    expect(checklist.unanswered_required).toEqual([]);
    expect(
      checklist.items.map((i: { label: string; answer: { value: unknown } | null }) => [
        i.label,
        i.answer?.value,
      ]),
    ).toEqual([
      ["Leak stopped", true],
      ["Water pressure after repair", 70],
      ["Before/after photo", photo],
      ["Notes for the customer", "Done (sandbox)"],
    ]);
    const report = await h.get(`/api/orders/${tour.order_id}/report`, { "x-api-key": h.sandboxKey });
    expect(report.statusCode).toBe(200);
    const printed = await pdfText(report.rawPayload);
    expect(printed).toContain("Leak stopped");
    expect(printed).toContain("Water pressure after repair");
    expect(printed).toMatch(/70\s*psi/);
  });

  it("answers the job's checklist before completing it, a required photo with the photo it adds", async () => {
    const h = await createHarness();
    open.push(h);
    const template = (key: string, items: unknown[]) =>
      h.post("/api/checklist-templates", { trade: "plumbing", name: "Sandbox", items }, { "x-api-key": key });
    const made = await template(h.sandboxKey, [
      { kind: "yes_no", label: "Water shut off", required: true },
      { kind: "number", label: "Pressure", unit: "psi", min: 20, max: 80, required: true },
      { kind: "text", label: "Notes", max_length: 4, required: true },
    ]);
    expect(made.statusCode, made.body).toBe(200);
    const photoKey = await h.key("photo-account", "test");
    expect((await template(photoKey, [{ kind: "photo", label: "Joint", required: true }])).statusCode).toBe(
      200,
    );
    const answered = await order(h, h.sandboxKey, JOB);
    const photo = await order(h, photoKey, JOB);
    const at = (steps: number) => () => new Date(Date.now() + steps * (SANDBOX_STEP_MS + 500));
    for (let step = 1; step <= 4; step++) await background(h.services, { now: at(step) }).tick();
    const [done, withPhoto] = await h.services.store.orders.byIds([answered.order_id, photo.order_id]);
    expect(done?.status).toBe("completed");
    type Answered = { template_id: string; answer: { value: unknown } | null };
    const checklist = (
      await h.get(`/api/orders/${answered.order_id}/checklist`, { "x-api-key": h.sandboxKey })
    ).json();
    // The sandbox's starter plumbing checklist first (every item answered), then the account's own.
    expect(checklist.items.every((i: Answered) => i.answer !== null)).toBe(true);
    expect(checklist.unanswered_required).toEqual([]);
    const own = checklist.items.filter((i: Answered) => i.template_id === made.json().template_id);
    expect(own.map((i: Answered) => i.answer?.value)).toEqual([true, 50, "Done"]);
    expect(
      (await kinds(h, h.sandboxKey, answered.order_id)).filter((k) => k === "order.checklist_answered"),
    ).toHaveLength(checklist.items.length);
    expect(withPhoto?.status).toBe("completed");
    const photoItem = (await h.get(`/api/orders/${photo.order_id}/checklist`, { "x-api-key": photoKey }))
      .json()
      .items.find((i: { label: string }) => i.label === "Joint");
    const files = (await h.get(`/api/orders/${photo.order_id}/attachments`, { "x-api-key": photoKey })).json()
      .attachments as Array<{ attachment_id: string; kind: string }>;
    expect(photoItem.answer.value).toBe(files.find((f) => f.kind === "photo")?.attachment_id);
  });
});

describe("sandbox windowed work", () => {
  const statusOf = async (h: Harness, id: string) => (await h.services.store.orders.byIds([id]))[0]?.status;
  const windowStart = async (h: Harness, id: string) =>
    Date.parse((await h.services.store.orders.byIds([id]))[0]?.window_start as string);

  it("accepts a scheduled job at once but starts it at its window, in the sandbox's clock", async () => {
    const h = await createHarness();
    open.push(h);
    const booked = await order(h, h.sandboxKey, {
      ...JOB,
      urgency: "scheduled",
      description: "Water heater",
    });
    expect(booked.status).toBe("offered");
    const start = await windowStart(h, booked.order_id);
    const now = Date.now();
    expect(start).toBeGreaterThan(now + 60 * 60_000); // the earliest window: the next working day, 08:00
    const tickAt = (ms: number) => background(h.services, { now: () => new Date(ms) }).tick();
    await tickAt(now + SANDBOX_STEP_MS + 500);
    expect(await statusOf(h, booked.order_id)).toBe("accepted");
    // Round after round until the window: the contractor waits, as a real one would.
    for (const at of [now + 60_000, now + 60 * 60_000, start - 60_000]) {
      await tickAt(at);
      expect(await statusOf(h, booked.order_id)).toBe("accepted");
    }
    const seen: Array<string | undefined> = [];
    for (let step = 0; step < 4; step++) {
      await tickAt(start + step * (SANDBOX_STEP_MS + 500));
      seen.push(await statusOf(h, booked.order_id));
    }
    expect(seen).toEqual([
      "en_route",
      "on_site",
      "completed",
      (await sandboxPolicyOutcome(h, booked.order_id)).status,
    ]);
  });

  it("reaches the window sooner with SANDBOX_CLOCK_SPEED (tests and demos): 3600, an hour a second", async () => {
    const h = await createHarness({ SANDBOX_CLOCK_SPEED: "3600" });
    open.push(h);
    const booked = await order(h, h.sandboxKey, {
      ...JOB,
      urgency: "scheduled",
      description: "Water heater",
    });
    const start = await windowStart(h, booked.order_id);
    let now = Date.now();
    const clock = () => new Date(now);
    const player = new SandboxPlayer({ ...h.services, now: clock }); // the sandbox's clock starts here
    const origin = now;
    now += SANDBOX_STEP_MS + 500;
    await player.tick();
    expect(await statusOf(h, booked.order_id)).toBe("accepted");
    // Real seconds to the window: (start - origin) / 3600. Just before, it waits; just after, it sets off.
    const toWindow = (start - origin) / 3600;
    now = origin + Math.max(toWindow - 1_000, SANDBOX_STEP_MS + 1_000);
    await player.tick();
    expect(await statusOf(h, booked.order_id)).toBe("accepted");
    now = origin + toWindow + SANDBOX_STEP_MS + 1_000;
    await player.tick();
    expect(await statusOf(h, booked.order_id)).toBe("en_route");
  });
});

describe("NTE increases and the invoice", () => {
  it("caps the invoice at the NTE in force, raised only by the caller's approval of the contractor's request", async () => {
    const { h, caller, keys } = await setup();
    // A default endpoint, so that the order's changes have a recipient and their events are written.
    const acme = await h.services.store.keys.ensureAccount("acme");
    await h.services.store.webhooks.setDefaultEndpoint(
      acme.id,
      true,
      "https://hooks.example.com/acme",
      new Date().toISOString(),
    );
    const created = await order(h, caller, { ...JOB, nte_cents: 30_000 });
    const contractor = (await holder(h, created.order_id)) as string;
    const key = keys.get(contractor) as string;
    const offer = await pendingOffer(h, key, created.order_id);
    await h.post(ACCEPT, { offer_id: offer?.offer_id }, { "x-api-key": key });
    const NTE = "/api/contractor/v1/jobs/nte-request";
    const DECIDE = "/api/dispatch/v1/orders/nte-decision";
    const INVOICE = "/api/contractor/v1/jobs/invoice";
    const ask = (cents: number, reason = "more work") =>
      h.post(NTE, { order_id: created.order_id, requested_nte_cents: cents, reason }, { "x-api-key": key });
    const decide = (requestId: string, decision: string, as = caller) =>
      h.post(DECIDE, { order_id: created.order_id, request_id: requestId, decision }, { "x-api-key": as });
    const low = await ask(30_000);
    expect(low.statusCode).toBe(422);
    expect(low.json().errors[0].field).toBe("requested_nte_cents");
    const first = await ask(45_000, "rot behind the wall");
    expect(first.statusCode, first.body).toBe(200);
    expect((await ask(50_000)).statusCode).toBe(409); // one request waits at a time
    const seen = (await h.get(`/api/dispatch/v1/orders/${created.order_id}`, { "x-api-key": caller })).json();
    expect(seen.nte_requests).toEqual([
      expect.objectContaining({ request_id: first.json().request_id, status: "pending" }),
    ]);
    expect((await decide(first.json().request_id, "reject")).json()).toMatchObject({
      nte_approved_cents: null,
    });
    expect((await decide(first.json().request_id, "approve")).statusCode).toBe(409);

    for (const report of [
      { status: "en_route", eta_minutes: 10 },
      { status: "on_site" },
      { status: "completed", final_cost_cents: 40_000 },
    ]) {
      await h.post(REPORT, { order_id: created.order_id, ...report }, { "x-api-key": key });
    }
    // A completed job waits for its invoice in the contractor's completed list, not among its active jobs.
    const listed = async (status?: string) =>
      (await h.get(status ? `${JOBS}?status=${status}` : JOBS, { "x-api-key": key })).json().jobs as Array<{
        order_id: string;
        status: string;
      }>;
    expect((await listed()).map((j) => j.order_id)).not.toContain(created.order_id);
    expect(await listed("completed")).toContainEqual(
      expect.objectContaining({ order_id: created.order_id, status: "completed" }),
    );
    const badStatus = await h.get(`${JOBS}?status=done`, { "x-api-key": key });
    expect(badStatus.statusCode).toBe(422);
    expect(badStatus.json().errors[0].field).toBe("status");
    const over = await h.post(
      INVOICE,
      { order_id: created.order_id, amount_cents: 40_000 },
      { "x-api-key": key },
    );
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ code: "nte_exceeded", nte_in_force_cents: 30_000 });
    const second = await ask(40_000, "as found on site");
    const other = await h.key("someone-else", "live");
    expect((await decide(second.json().request_id, "approve", other)).statusCode).toBe(404);
    expect((await decide(second.json().request_id, "approve")).json()).toMatchObject({
      nte_approved_cents: 40_000,
    });
    const invoiced = await h.post(
      INVOICE,
      { order_id: created.order_id, amount_cents: 40_000 },
      { "x-api-key": key },
    );
    expect(invoiced.statusCode, invoiced.body).toBe(200);
    expect(invoiced.json().status).toBe("invoiced");
    expect((await listed("completed")).map((j) => j.order_id)).not.toContain(created.order_id);
    const trail = await kinds(h, caller, created.order_id);
    expect(trail.filter((k) => k.startsWith("order.nte_"))).toEqual([
      "order.nte_requested",
      "order.nte_decided",
      "order.nte_requested",
      "order.nte_decided",
    ]);
    expect(trail[trail.length - 1]).toBe("order.invoiced");
    // Every status change and NTE decision (and request) went to the webhook outbox with the change.
    const events = await h.services.store.webhooks.eventsOfOrder(created.order_id);
    expect(events.map((e) => e.type)).toEqual([
      "order.offered",
      "order.accepted",
      "order.nte_requested",
      "order.nte_rejected",
      "order.en_route",
      "order.on_site",
      "order.completed",
      "order.nte_requested",
      "order.nte_approved",
      "order.invoiced",
    ]);
    const last = JSON.parse(events[events.length - 1]?.payload ?? "{}");
    expect(last).toMatchObject({
      type: "order.invoiced",
      livemode: true,
      data: { previous_status: "completed", order: { status: "invoiced", invoice_cents: 40_000 } },
    });
  });
});

describe("the dispatcher's side", () => {
  it("lists the queue, assigns and reassigns by hand with a reason, manages the pool, and cancels even on site", async () => {
    const { h, ids, caller, keys } = await setup();
    const dispatcher = await h.dispatcherKey("live");
    const created = await order(h, caller);
    // While offered, the board sees when the pending offer lapses (the offer's own deadline).
    const firstOffer = await pendingOffer(
      h,
      keys.get((await holder(h, created.order_id)) as string) as string,
      created.order_id,
    );
    const offered = (
      await h.get("/api/dispatcher/v1/orders?status=offered", { "x-api-key": dispatcher })
    ).json();
    expect(offered.orders).toEqual([
      expect.objectContaining({ order_id: created.order_id, offer_deadline_at: firstOffer?.deadline_at }),
    ]);
    // Exhaust the cascade: the order lands in the dispatcher's queue.
    for (let i = 0; i < MAX_OFFERS; i++) {
      const current = (await holder(h, created.order_id)) as string;
      const offer = await pendingOffer(h, keys.get(current) as string, created.order_id);
      await h.post(DECLINE, { offer_id: offer?.offer_id }, { "x-api-key": keys.get(current) as string });
    }
    const queue = (
      await h.get("/api/dispatcher/v1/orders?status=needs_dispatcher", { "x-api-key": dispatcher })
    ).json();
    expect(queue.orders.map((o: { order_id: string }) => o.order_id)).toContain(created.order_id);
    expect(queue.orders[0].account_id).toMatch(/^acct_/);
    expect(queue.orders[0].offer_deadline_at).toBeNull();

    const [x, y] = ids as [string, string];
    const assigned = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: created.order_id, contractor_id: x, reason: "customer asked for them" },
      { "x-api-key": dispatcher },
    );
    expect(assigned.statusCode, assigned.body).toBe(200);
    expect(assigned.json()).toMatchObject({ status: "accepted" });
    expect(h.services.pool.index.jobsOf(x)).toBe(1); // this process's index follows the store
    const moved = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: created.order_id, contractor_id: y, reason: "x fell ill" },
      { "x-api-key": dispatcher },
    );
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await holder(h, created.order_id)).toBe(y);
    expect(Object.fromEntries(await h.services.store.contractors.activeJobCounts())).toEqual({ [y]: 1 });
    expect([h.services.pool.index.jobsOf(x), h.services.pool.index.jobsOf(y)]).toEqual([0, 1]);
    // The dispatch team reads the records in full: the contractors' ids are its disclosures.
    const audit = (
      await h.get(`/api/dispatcher/v1/audit?order_id=${created.order_id}&kind=order.assigned`, {
        "x-api-key": await h.dispatcherKey("live"),
      })
    ).json();
    expect(audit.records.map((r: { disclosed: Record<string, unknown> }) => r.disclosed)).toEqual([
      expect.objectContaining({ action: "assign", reason: "customer asked for them", to_contractor: x }),
      expect.objectContaining({
        action: "reassign",
        reason: "x fell ill",
        from_contractor: x,
        to_contractor: y,
      }),
    ]);

    // Exclude x: never offered again, and not assignable.
    const excluded = await h.post(
      "/api/dispatcher/v1/contractors/status",
      { contractor_id: x, action: "exclude", reason: "no-show twice" },
      { "x-api-key": dispatcher },
    );
    expect(excluded.json()).toMatchObject({ excluded: true });
    // Excluding it again leaves its standing as it was (why dispatcher.pool's MCP tool is idempotent).
    const again = await h.post(
      "/api/dispatcher/v1/contractors/status",
      { contractor_id: x, action: "exclude", reason: "no-show twice" },
      { "x-api-key": dispatcher },
    );
    expect(again.json()).toEqual(excluded.json());
    for (let i = 0; i < 4; i++) expect(await holder(h, (await order(h, caller)).order_id)).not.toBe(x);
    const refused = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: created.order_id, contractor_id: x, reason: "try again" },
      { "x-api-key": dispatcher },
    );
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe("contractor_unavailable");

    // On site: the caller may no longer cancel, a dispatcher may.
    const key = keys.get(y) as string;
    await h.post(
      REPORT,
      { order_id: created.order_id, status: "en_route", eta_minutes: 5 },
      { "x-api-key": key },
    );
    await h.post(REPORT, { order_id: created.order_id, status: "on_site" }, { "x-api-key": key });
    expect((await h.post(CANCEL, { order_id: created.order_id }, { "x-api-key": caller })).statusCode).toBe(
      409,
    );
    const cancelled = await h.post(
      "/api/dispatcher/v1/orders/cancel",
      { order_id: created.order_id, reason: "site closed" },
      { "x-api-key": dispatcher },
    );
    expect(cancelled.json()).toMatchObject({ status: "cancelled", status_reason: "site closed" });

    // Nobody else may act as the dispatcher.
    for (const other of [caller, key]) {
      const res = await h.get("/api/dispatcher/v1/orders", { "x-api-key": other });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("key_kind_not_allowed");
    }
  });
});

describe("sandbox simulation off", () => {
  it("leaves sandbox orders to contractor keys, with live deadlines", async () => {
    const h = await createHarness({ SANDBOX_SIMULATION: "false" });
    open.push(h);
    const created = await order(h, h.sandboxKey, { ...JOB, urgency: "urgent" });
    const [offer] = await h.services.store.orders.offersOfContractor(
      (await holder(h, created.order_id)) as string,
      false,
      "pending",
      10,
    );
    const window = Date.parse(offer?.deadline_at as string) - Date.parse(offer?.offered_at as string);
    expect(window).toBe(15 * 60_000);
    await background(h.services, {
      now: () => new Date(Date.now() + 60_000),
      sandbox: false,
    }).tick();
    expect((await h.services.store.orders.byIds([created.order_id]))[0]?.status).toBe("offered");
  });
});

describe("eligibility at commit", () => {
  it("never re-offers the job to a contractor deactivated or excluded after the order was ranked", async () => {
    const { h, ids, caller, keys } = await setup(4);
    const dispatcher = await h.dispatcherKey("live");
    const created = await order(h, caller);
    const first = (await holder(h, created.order_id)) as string;
    const [ranked] = await h.services.store.orders.byIds([created.order_id]);
    const ranking = ranked?.ranking ?? [];
    const [second, third] = ranking.filter((id) => id !== first);
    for (const [id, action] of [
      [second, "deactivate"],
      [third, "exclude"],
    ] as const) {
      const res = await h.post(
        "/api/dispatcher/v1/contractors/status",
        { contractor_id: id, action, reason: "complaint" },
        { "x-api-key": dispatcher },
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    const offer = await pendingOffer(h, keys.get(first) as string, created.order_id);
    const declined = await h.post(
      DECLINE,
      { offer_id: offer?.offer_id },
      { "x-api-key": keys.get(first) as string },
    );
    expect(declined.statusCode, declined.body).toBe(200);
    const next = await holder(h, created.order_id);
    expect(next).not.toBe(second);
    expect(next).not.toBe(third);
    expect(ids).toContain(first);
  });

  it("refuses to assign a contractor deactivated before the assignment", async () => {
    const { h, ids, caller } = await setup(2);
    const dispatcher = await h.dispatcherKey("live");
    const created = await order(h, caller);
    const current = await holder(h, created.order_id);
    const other = ids.find((id) => id !== current) as string;
    await h.post(
      "/api/dispatcher/v1/contractors/status",
      { contractor_id: other, action: "deactivate", reason: "on leave" },
      { "x-api-key": dispatcher },
    );
    const res = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: created.order_id, contractor_id: other, reason: "by hand" },
      { "x-api-key": dispatcher },
    );
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe("contractor_unavailable");
  });
});

describe("sandbox counter-offers", () => {
  it("counters on request, 15 % above the estimate; the account accepts and the job goes on at that price", async () => {
    const h = await createHarness();
    open.push(h);
    const at = (steps: number) => () => new Date(Date.now() + steps * (SANDBOX_STEP_MS + 500));
    const placed = await order(h, h.sandboxKey, { ...JOB, description: "Leak [sandbox:counter]" });
    await background(h.services, { now: at(1) }).tick();
    const waiting = (
      await h.get(`/api/dispatch/v1/orders/${placed.order_id}`, { "x-api-key": h.sandboxKey })
    ).json();
    expect(waiting.status).toBe("offered");
    const estimate = Number(waiting.estimated_cost_cents);
    expect(waiting.counter).toMatchObject({ status: "pending", price_cents: Math.round(estimate * 1.15) });
    const accepted = await h.post(
      "/api/dispatch/v1/orders/counter-accept",
      { order_id: placed.order_id },
      { "x-api-key": h.sandboxKey },
    );
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({
      status: "accepted",
      agreed_price_cents: Math.round(estimate * 1.15),
    });
    for (let step = 2; step <= 5; step++) await background(h.services, { now: at(step) }).tick();
    const invoice = (
      await h.get(`/api/orders/${placed.order_id}/invoice`, { "x-api-key": h.sandboxKey })
    ).json();
    expect(invoice.total_cents).toBe(Math.round(estimate * 1.15));
  });
});
