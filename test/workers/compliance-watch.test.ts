// The daily pool.compliance_expiring list: once per UTC day and mode however many processes run the
// worker, listing the active contractors kept from work today and those whose documents run out within
// 45 days. Time is injected; no waiting.

import { afterEach, describe, expect, it } from "vitest";
import { ComplianceWatch } from "../../src/workers/compliance-watch.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

const at = (iso: string) => () => new Date(iso);

describe("the daily compliance list", () => {
  it("reaches the dispatch team's event stream once a day per mode, and no account's", async () => {
    const h = await createHarness();
    open.push(h);
    await h.services.store.contractors.insert(
      [liveContractor({ id: "ctr_cwsexpired", licenseVerifiedUntil: "2026-11-23" })],
      testRecord(),
    );
    const { store } = h.services;
    const watch = new ComplianceWatch({ store, now: at("2026-11-24T06:00:00Z") });
    expect((await watch.tick()).sort()).toEqual(["live", "sandbox"]);
    expect(await new ComplianceWatch({ store, now: at("2026-11-24T18:00:00Z") }).tick()).toEqual([]);
    const page = async (key: string) => {
      const res = await h.get("/api/events?limit=500", { "x-api-key": key, accept: "application/json" });
      expect(res.statusCode, res.body).toBe(200);
      return (
        res.json().events as Array<{ type: string; livemode: boolean; data: Record<string, unknown> }>
      ).filter((e) => e.type === "pool.compliance_expiring");
    };
    const live = await page(await h.dispatcherKey("live"));
    expect(live).toHaveLength(1);
    expect(live[0]?.livemode).toBe(true);
    expect(live[0]?.data).toMatchObject({ pool: "live", day: "2026-11-24", not_compliant: 1 });
    expect(live[0]?.data.contractors).toContainEqual(
      expect.objectContaining({ contractor_id: "ctr_cwsexpired", status: "not_compliant" }),
    );
    // The same list as the audit record, which its seal names.
    const verify = await h.get(`/api/attest/verify/${live[0]?.data.seal}`);
    expect(verify.statusCode, verify.body).toBe(200);
    const sandbox = await page(await h.dispatcherKey("test"));
    expect(sandbox.map((e) => e.data.pool)).toEqual(["sandbox"]);
    expect(await page(await h.key("acme", "live"))).toEqual([]);
    expect(await page(await h.key("acme", "test"))).toEqual([]);
  });

  it("is recorded once a day per mode across two workers, listing the expired and the expiring", async () => {
    const h = await createHarness();
    open.push(h);
    await h.services.store.contractors.insert(
      [
        liveContractor({ id: "ctr_cwexpired", licenseVerifiedUntil: "2026-11-23" }),
        liveContractor({ id: "ctr_cwnone", insuranceVerifiedUntil: null }),
        liveContractor({ id: "ctr_cwsoon", insuranceVerifiedUntil: "2027-01-08" }), // today + 45
        liveContractor({ id: "ctr_cwlater", insuranceVerifiedUntil: "2027-01-09" }), // today + 46
        liveContractor({ id: "ctr_cwfine" }),
        liveContractor({ id: "ctr_cwoff", active: false, insuranceVerifiedUntil: null }),
      ],
      testRecord(),
    );
    const { store } = h.services;
    // Two processes' workers sharing the store, at two moments of the same UTC day.
    const first = new ComplianceWatch({ store, now: at("2026-11-24T00:05:00Z") });
    const second = new ComplianceWatch({ store, now: at("2026-11-24T23:55:00Z") });
    const runs = await Promise.all([first.tick(), second.tick()]);
    expect(runs.flat().sort()).toEqual(["live", "sandbox"]);
    expect(await first.tick()).toEqual([]);
    expect(await second.tick()).toEqual([]);

    const dispatcher = await h.dispatcherKey("live");
    const read = async () => {
      const res = await h.get("/api/dispatcher/v1/audit?kind=pool.compliance_expiring", {
        "x-api-key": dispatcher,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().records as Array<{ actor: string; disclosed: Record<string, unknown> }>;
    };
    const [record, ...others] = await read();
    expect(others).toEqual([]);
    expect(record?.disclosed).toMatchObject({
      pool: "live",
      day: "2026-11-24",
      not_compliant: 2,
      expiring: 1,
      contractors: [
        {
          contractor_id: "ctr_cwnone",
          insurance_verified_until: null,
          status: "not_compliant",
          compliant_through: null,
        },
        {
          contractor_id: "ctr_cwexpired",
          license_verified_until: "2026-11-23",
          status: "not_compliant",
          compliant_through: null,
        },
        {
          contractor_id: "ctr_cwsoon",
          insurance_verified_until: "2027-01-08",
          status: "expiring",
          compliant_through: "2027-01-08",
        },
      ],
    });

    // The next UTC day gets its own list.
    const nextDay = new ComplianceWatch({ store, now: at("2026-11-25T00:00:01Z") });
    expect((await nextDay.tick()).sort()).toEqual(["live", "sandbox"]);
    const days = (await read()).map((r) => r.disclosed.day).sort();
    expect(days).toEqual(["2026-11-24", "2026-11-25"]);
  });

  it("lists the sandbox's few expired contractors in the sandbox's record", async () => {
    const h = await createHarness();
    open.push(h);
    // The harness seeded the sandbox today (wall clock); a worker a day later sees its lapsed few.
    const tomorrow = new Date(Date.now() + 86_400_000);
    await new ComplianceWatch({ store: h.services.store, now: () => tomorrow }).tick();
    const res = await h.get("/api/dispatcher/v1/audit?kind=pool.compliance_expiring", {
      "x-api-key": await h.dispatcherKey("test"),
    });
    const [record] = res.json().records as Array<{
      disclosed: { pool: string; not_compliant: number; active_contractors: number };
    }>;
    expect(record?.disclosed.pool).toBe("sandbox");
    expect(record?.disclosed.not_compliant).toBeGreaterThan(0);
    expect(record?.disclosed.not_compliant).toBeLessThan((record?.disclosed.active_contractors ?? 0) * 0.1);
  });
});
