// Maintenance plans (issue 34): plans at a site, refused with the field at fault when their rule or window
// cannot work; the generator turning occurrences inside the horizon into scheduled orders once (even when
// two rounds run at once), leaving failed ones recorded; skipping and moving occurrences with a reason;
// overdue occurrences flagged once with their event; on an injected clock, on SQLite and PostgreSQL.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDue, settleEnded } from "../../src/operations/maintenance/generate.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { type TestClock, testClock } from "../helpers/test-clock.js";

const SITES = "/api/dispatch/v1/sites";
const PLANS = "/api/dispatch/v1/plans";
const OCCURRENCES = "/api/dispatch/v1/occurrences";
const DAY = 86_400_000;

let h: Harness;
let clock: TestClock;
let acme: string;
let globex: string;
let site: string;
let hvacCrew: string;

beforeAll(async () => {
  clock = testClock();
  h = await createHarness({ MAINTENANCE_INTERVAL_MS: "0" }, {}, { now: clock.now });
  // Two HVAC technicians in San Francisco who work any time.
  await h.services.store.contractors.insert(
    [0, 1].map((i) =>
      liveContractor({ id: `ctr_pm${i}`, rating: 4.9 - i, trades: ["hvac"], maxActiveJobs: 50 }),
    ),
    testRecord(),
  );
  await h.services.pool.load();
  acme = await h.key("acme-pm", "live");
  globex = await h.key("globex-pm", "live");
  const created = await h.post(
    SITES,
    {
      name: "Store #7",
      address: "1 Market St",
      city: "San Francisco",
      state: "CA",
      zip: "94105",
      hours: "mon-sat 07:00-21:00",
    },
    { "x-api-key": acme },
  );
  expect(created.statusCode, created.body).toBe(200);
  site = created.json().site_id;
  const other = await h.post(
    SITES,
    { name: "HQ", address: "2 Main St", city: "San Francisco", state: "CA", zip: "94105" },
    { "x-api-key": acme },
  );
  hvacCrew = other.json().site_id;
});

afterAll(async () => {
  await h.close();
});

const plan = (overrides: Record<string, unknown> = {}) => ({
  site_id: site,
  trade: "hvac",
  name: "Filter change",
  description: "Replace the rooftop units' filters",
  duration_minutes: 90,
  recurrence: "FREQ=WEEKLY;BYDAY=TU",
  window: { days: ["tue", "wed"], start: "08:00", end: "12:00" },
  horizon_days: 15,
  ...overrides,
});

describe("creating a plan", () => {
  it("refuses each fault naming its field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ recurrence: "FREQ=HOURLY" }, "recurrence"],
      [{ recurrence: "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=31" }, "recurrence"],
      [{ recurrence: "FREQ=WEEKLY;BYHOUR=9" }, "recurrence"],
      // Sundays only, and the site is closed on Sundays.
      [{ window: { days: ["sun"], start: "08:00", end: "12:00" } }, "window"],
      // Too short for the visit.
      [{ window: { days: ["tue"], start: "08:00", end: "09:00" } }, "window"],
      [{ asset_id: "ast_nothere" }, "asset_id"],
      [{ checklist_template_id: "clt_nothere" }, "checklist_template_id"],
    ];
    for (const [overrides, field] of cases) {
      const res = await h.post(PLANS, plan(overrides), { "x-api-key": acme });
      expect(res.statusCode, `${JSON.stringify(overrides)}: ${res.body}`).toBe(422);
      const fields = res.json().errors.map((e: { field: string }) => e.field.split(".")[0]);
      expect(fields, res.body).toContain(field);
    }
    // Another account's site is not found for this key.
    expectProblem(await h.post(PLANS, plan(), { "x-api-key": globex }), 404, "not_found");
  });

  it("creates, reads, changes and archives a plan, each change sealed", async () => {
    const created = await h.post(PLANS, plan({ site_id: hvacCrew }), { "x-api-key": acme });
    expect(created.statusCode, created.body).toBe(200);
    const p = created.json();
    expect(p).toMatchObject({ status: "active", version: 1, time_zone: "America/Los_Angeles" });
    const detail = (await h.get(`${PLANS}/${p.plan_id}`, { "x-api-key": acme })).json();
    expect(detail.occurrences.length).toBeGreaterThan(0);
    expect(detail.occurrences[0].status).toBe("upcoming");
    // The other account cannot read it.
    expectProblem(await h.get(`${PLANS}/${p.plan_id}`, { "x-api-key": globex }), 404, "not_found");
    // A stale version is refused.
    expectProblem(
      await h.post(`${PLANS}/update`, { plan_id: p.plan_id, version: 7, name: "x" }, { "x-api-key": acme }),
      409,
      "invalid_transition",
    );
    const updated = await h.post(
      `${PLANS}/update`,
      { plan_id: p.plan_id, version: 1, recurrence: "FREQ=MONTHLY;BYDAY=2TU" },
      { "x-api-key": acme },
    );
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ version: 2, recurrence: "FREQ=MONTHLY;BYDAY=2TU" });
    const archived = await h.post(`${PLANS}/archive`, { plan_id: p.plan_id }, { "x-api-key": acme });
    expect(archived.json()).toMatchObject({ status: "archived", version: 3 });
    const listed = (await h.get(`${PLANS}?site_id=${hvacCrew}`, { "x-api-key": acme })).json();
    expect(listed.plans).toHaveLength(0);
    const all = (
      await h.get(`${PLANS}?site_id=${hvacCrew}&include_archived=true`, { "x-api-key": acme })
    ).json();
    expect(all.plans).toHaveLength(1);
    for (const seal of [p.seal, updated.json().seal, archived.json().seal]) {
      const record = await h.get(`/api/attest/verify/${seal}`);
      expect(record.statusCode, record.body).toBe(200);
    }
  });
});

describe("generation", () => {
  let planId: string;

  it("generates the occurrences inside the horizon once, as scheduled orders with their windows", async () => {
    const created = await h.post(PLANS, plan(), { "x-api-key": acme });
    expect(created.statusCode, created.body).toBe(200);
    planId = created.json().plan_id;
    // Two rounds at once (as two processes would): each occurrence becomes one order.
    const [a, b] = await Promise.all([generateDue(h.services), generateDue(h.services)]);
    expect(a.generated + b.generated).toBeGreaterThanOrEqual(2);
    const again = await generateDue(h.services);
    expect(again.generated).toBe(0);
    const listed = (await h.get(`${OCCURRENCES}?plan_id=${planId}`, { "x-api-key": acme })).json()
      .occurrences;
    const generated = listed.filter((o: { status: string }) => o.status === "generated");
    expect(generated.length).toBe(a.generated + b.generated);
    const orderIds = new Set(generated.map((o: { order_id: string }) => o.order_id));
    expect(orderIds.size).toBe(generated.length);
    for (const o of generated) {
      const order = (await h.get(`/api/dispatch/v1/orders/${o.order_id}`, { "x-api-key": acme })).json();
      expect(order).toMatchObject({ urgency: "scheduled", site: { site_id: site } });
      expect(order.arrival_window.start).toBe(o.window.start);
      // Tuesday 08:00 in San Francisco.
      const local = new Date(o.window.start).toLocaleString("en-US", {
        timeZone: "America/Los_Angeles",
        weekday: "short",
        hour: "2-digit",
        hour12: false,
      });
      expect(local).toMatch(/^Tue,? 08$/);
    }
  });

  it("skips and moves occurrences with a reason, and refuses what cannot be", async () => {
    const listed = (await h.get(`${OCCURRENCES}?plan_id=${planId}`, { "x-api-key": acme })).json()
      .occurrences;
    const [first, second] = listed.filter((o: { status: string }) => o.status === "generated");
    const upcoming = listed.find((o: { status: string }) => o.status === "upcoming");
    const skipped = await h.post(
      `${OCCURRENCES}/skip`,
      { plan_id: planId, occurrence_key: first.occurrence_key, reason: "Store closed" },
      { "x-api-key": acme },
    );
    expect(skipped.statusCode, skipped.body).toBe(200);
    expect(skipped.json().status).toBe("skipped");
    const order = (await h.get(`/api/dispatch/v1/orders/${first.order_id}`, { "x-api-key": acme })).json();
    expect(order.status).toBe("cancelled");
    // Moving a skipped one is refused; an unknown key is not found.
    expectProblem(
      await h.post(
        `${OCCURRENCES}/move`,
        { plan_id: planId, occurrence_key: first.occurrence_key, reason: "x", service_window: second.window },
        { "x-api-key": acme },
      ),
      409,
      "invalid_transition",
    );
    expectProblem(
      await h.post(
        `${OCCURRENCES}/skip`,
        { plan_id: planId, occurrence_key: "2001-01-01", reason: "x" },
        { "x-api-key": acme },
      ),
      404,
      "not_found",
    );
    // A generated one moves a day later: its order's window moves.
    const later = {
      start: new Date(Date.parse(second.window.start) + DAY).toISOString(),
      end: new Date(Date.parse(second.window.end) + DAY).toISOString(),
    };
    const moved = await h.post(
      `${OCCURRENCES}/move`,
      {
        plan_id: planId,
        occurrence_key: second.occurrence_key,
        reason: "Manager asked",
        service_window: later,
      },
      { "x-api-key": acme },
    );
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ window: later, moved_from: second.window, status: "generated" });
    const rescheduled = (
      await h.get(`/api/dispatch/v1/orders/${second.order_id}`, { "x-api-key": acme })
    ).json();
    expect(rescheduled.arrival_window.start).toBe(later.start);
    if (upcoming) {
      // One not generated yet becomes its order at once.
      const moveUpcoming = await h.post(
        `${OCCURRENCES}/move`,
        {
          plan_id: planId,
          occurrence_key: upcoming.occurrence_key,
          reason: "Earlier",
          service_window: {
            start: new Date(Date.parse(upcoming.window.start) + DAY).toISOString(),
            end: new Date(Date.parse(upcoming.window.end) + DAY).toISOString(),
          },
        },
        { "x-api-key": acme },
      );
      expect(moveUpcoming.statusCode, moveUpcoming.body).toBe(200);
      expect(moveUpcoming.json().order_id).toMatch(/^ord_/);
    }
  });

  it("flags an occurrence whose window ended with its order not done as overdue, once, with its event", async () => {
    const listed = (await h.get(`${OCCURRENCES}?plan_id=${planId}`, { "x-api-key": acme })).json()
      .occurrences;
    const open = listed.filter((o: { status: string }) => o.status === "generated");
    expect(open.length).toBeGreaterThan(0);
    const last = open[open.length - 1];
    clock.advance(Date.parse(last.window.end) - clock.now().getTime() + 60_000);
    const [x, y] = await Promise.all([settleEnded(h.services), settleEnded(h.services)]);
    expect(x.overdue + y.overdue).toBe(open.length);
    expect((await settleEnded(h.services)).overdue).toBe(0);
    const after = (
      await h.get(`${OCCURRENCES}?plan_id=${planId}&status=overdue`, { "x-api-key": acme })
    ).json();
    expect(after.occurrences).toHaveLength(open.length);
    const events = (
      await h.get("/api/events?limit=500", { "x-api-key": acme, accept: "application/json" })
    ).json().events as Array<{ type: string; order_id?: string; data?: { order?: { order_id: string } } }>;
    const overdue = events.filter((e) => e.type === "order.maintenance_overdue");
    expect(overdue).toHaveLength(open.length);
    // Skipping an overdue occurrence settles it.
    const skip = await h.post(
      `${OCCURRENCES}/skip`,
      { plan_id: planId, occurrence_key: last.occurrence_key, reason: "Done by the landlord" },
      { "x-api-key": acme },
    );
    expect(skip.json().status).toBe("skipped");
    // The account's compliance and the public evals count them: none done within its window.
    const all = (await h.get(`${OCCURRENCES}?plan_id=${planId}`, { "x-api-key": acme })).json().occurrences;
    const ended = all.filter(
      (o: { status: string; window: { end: string } }) =>
        o.status !== "upcoming" &&
        o.status !== "skipped" &&
        Date.parse(o.window.end) <= clock.now().getTime(),
    );
    const compliance = (
      await h.get("/api/dispatch/v1/maintenance/compliance?period=rolling_30d", { "x-api-key": acme })
    ).json();
    expect(compliance.planned_maintenance).toMatchObject({
      occurrences_due: ended.length,
      completed_in_window: 0,
      not_done: ended.length,
    });
    expect(compliance.planned_maintenance.compliance_rate.value).toBe(0);
    expect(compliance.provenance["planned_maintenance.compliance_rate"].sample_size).toBe(ended.length);
    const evals = (await h.get("/api/dispatch/analytics/evals?period=rolling_30d")).json();
    expect(evals.planned_maintenance.occurrences_due).toBeGreaterThanOrEqual(ended.length);
    expect(evals.methodology).toContain("Planned maintenance");
  });
});

describe("a simulated year", () => {
  it("generates every occurrence once, at its local time across DST, month ends and 5th weekdays", async () => {
    clock.advance(DAY);
    await h.services.store.contractors.insert(
      [0, 1].map((i) =>
        liveContractor({
          id: `ctr_pmny${i}`,
          trades: ["hvac", "plumbing"],
          states: ["NY"],
          homeZip: "10001",
          lat: 40.75,
          lon: -73.99,
          maxActiveJobs: 500,
        }),
      ),
      testRecord(),
    );
    await h.services.pool.load();
    const ny = await h.post(
      SITES,
      { name: "Herald Sq", address: "151 W 34th St", city: "New York", state: "NY", zip: "10001" },
      { "x-api-key": acme },
    );
    expect(ny.statusCode, ny.body).toBe(200);
    const rules = {
      "FREQ=MONTHLY;BYDAY=5FR": { days: ["fri"], start: "07:00", end: "11:00" },
      "FREQ=MONTHLY;BYMONTHDAY=-1": {
        days: ["mon", "tue", "wed", "thu", "fri"],
        start: "07:00",
        end: "11:00",
      },
      "FREQ=WEEKLY;BYDAY=SU": { days: ["sun"], start: "01:00", end: "05:00" },
    };
    const plans: Array<{ id: string; rule: string }> = [];
    for (const [rule, window] of Object.entries(rules)) {
      const res = await h.post(
        PLANS,
        plan({ site_id: ny.json().site_id, trade: "plumbing", recurrence: rule, window, horizon_days: 20 }),
        { "x-api-key": acme },
      );
      expect(res.statusCode, res.body).toBe(200);
      plans.push({ id: res.json().plan_id, rule });
    }
    const start = clock.now();
    // A year, a generator round every three days (as a server's would be every minute).
    for (let day = 0; day < 366; day += 3) {
      await generateDue(h.services);
      clock.advance(3 * DAY);
    }
    for (const p of plans) {
      const rows = await h.services.store.maintenance.occurrences({
        livemode: true,
        planId: p.id,
        limit: 1000,
      });
      const keys = rows.map((o) => o.key);
      expect(new Set(keys).size, p.rule).toBe(keys.length);
      const failed = rows.filter((o) => o.state !== "generated");
      expect(
        failed.map((o) => `${o.key}: ${o.reason}`),
        p.rule,
      ).toEqual([]);
      for (const o of rows) {
        // Each at its window's local start in New York, whatever the offset that day.
        const local = new Date(o.windowStart).toLocaleString("en-US", {
          timeZone: "America/New_York",
          hour: "2-digit",
          minute: "2-digit",
          hour12: false,
        });
        expect(local, `${p.rule} ${o.key}`).toBe(p.rule.includes("SU") ? "01:00" : "07:00");
        expect(o.windowStart >= start.toISOString(), o.key).toBe(true);
      }
      if (p.rule.includes("5FR")) {
        // A month has a fifth Friday four or five times a year: each on a Friday, on or after the 29th.
        expect(rows.length).toBeGreaterThanOrEqual(4);
        for (const o of rows) expect(Number(o.key.slice(8))).toBeGreaterThanOrEqual(29);
      }
      if (p.rule.includes("-1")) {
        // Every month's last day, moved to the next weekday when it falls on a weekend.
        expect(rows.length).toBeGreaterThanOrEqual(11);
        for (const o of rows) {
          const [y, m, d] = o.key.split("-").map(Number) as [number, number, number];
          expect(new Date(Date.UTC(y, m, 0)).getUTCDate(), o.key).toBe(d);
        }
      }
      if (p.rule.includes("SU")) expect(rows.length).toBeGreaterThanOrEqual(50);
    }
  }, 120_000);
});

describe("a plan's checklist", () => {
  it("gives the plan's orders its checklist template, even retired, and none of the account's other orders", async () => {
    const template = await h.post(
      "/api/checklist-templates",
      { trade: "hvac", name: "Filter change", items: [{ kind: "yes_no", label: "Filters replaced" }] },
      { "x-api-key": acme },
    );
    expect(template.statusCode, template.body).toBe(200);
    const templateId = template.json().template_id;
    // Retired: it stays off the account's other hvac orders, the plan names it all the same.
    await h.post(`/api/checklist-templates/${templateId}/retire`, {}, { "x-api-key": acme });
    const created = await h.post(
      PLANS,
      plan({
        name: "With a checklist",
        checklist_template_id: templateId,
        recurrence: "FREQ=WEEKLY;BYDAY=WE",
      }),
      { "x-api-key": acme },
    );
    expect(created.statusCode, created.body).toBe(200);
    await generateDue(h.services);
    const occurrences = (
      await h.get(`${OCCURRENCES}?plan_id=${created.json().plan_id}&status=generated`, { "x-api-key": acme })
    ).json().occurrences;
    expect(occurrences.length).toBeGreaterThan(0);
    const checklist = (
      await h.get(`/api/orders/${occurrences[0].order_id}/checklist`, { "x-api-key": acme })
    ).json();
    expect(checklist.template_ids).toContain(templateId);
    // An hvac order of the account's own, not planned: without it.
    const other = await h.post(
      "/api/dispatch/v1/order",
      { trade: "hvac", site_id: site, description: "No cooling", urgency: "urgent" },
      { "x-api-key": acme },
    );
    expect(other.statusCode, other.body).toBe(200);
    const otherChecklist = (
      await h.get(`/api/orders/${other.json().order_id}/checklist`, { "x-api-key": acme })
    ).json();
    expect(otherChecklist.template_ids).not.toContain(templateId);
    await h.post(`${PLANS}/archive`, { plan_id: created.json().plan_id }, { "x-api-key": acme });
  });
});
