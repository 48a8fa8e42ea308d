// The sandbox's sites, assets and plans (issue 34): seeded once into the sandbox account, each sealed by
// system:bootstrap, valid plans whose occurrences the generator turns into sandbox orders.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_ACCOUNT } from "../../src/auth/sandbox-key.js";
import { generateDue } from "../../src/operations/maintenance/generate.js";
import { seedSandboxMaintenance } from "../../src/sim/sandbox-maintenance.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

describe("the sandbox's planned maintenance", () => {
  it("is seeded once: three stores, their assets, four plans", async () => {
    expect(await seedSandboxMaintenance(h.services)).toBe(4);
    expect(await seedSandboxMaintenance(h.services)).toBe(0);
    const account = await h.services.store.keys.findAccountByName(SANDBOX_ACCOUNT);
    const plans = await h.services.store.maintenance.plans({
      livemode: false,
      accountId: account?.id as string,
      limit: 10,
    });
    expect(plans.map((p) => p.name).sort()).toEqual([
      "Quarterly HVAC filter change",
      "Quarterly HVAC filter change",
      "Quarterly HVAC filter change",
      "Yearly backflow test",
    ]);
    expect(plans.map((p) => p.createdBy)).toEqual(plans.map(() => "system:bootstrap"));
    const sites = await h.services.store.sites.sites({
      accountId: account?.id as string,
      livemode: false,
      limit: 10,
    });
    expect(sites.map((s) => s.timeZone)).toEqual(["America/Chicago", "America/Chicago", "America/Chicago"]);
    const records = (await h.get("/api/audit?limit=200", { "x-api-key": h.sandboxKey })).json()
      .records as Array<{ kind: string; actor: string }>;
    const seeded = records.filter((r) => r.kind === "site.created" || r.kind === "plan.created");
    expect(seeded.length).toBe(7);
    expect(new Set(seeded.map((r) => r.actor))).toEqual(new Set(["system:bootstrap"]));
    // Through the sandbox key, like any account's: the listing shows them, with their next occurrences.
    const listed = (
      await h.get("/api/dispatch/v1/occurrences?limit=200", { "x-api-key": h.sandboxKey })
    ).json().occurrences as Array<{ status: string; plan_name: string }>;
    expect(listed.length).toBeGreaterThan(0);
    // The generator makes sandbox orders of the quarterly visits inside their 45 days.
    const generated = await generateDue(h.services);
    expect(generated.generated + generated.failed).toBeGreaterThan(0);
    const after = (
      await h.get("/api/dispatch/v1/occurrences?limit=200", { "x-api-key": h.sandboxKey })
    ).json().occurrences as Array<{ status: string; order_id: string | null }>;
    expect(
      after.some((o) => o.status === "generated" && o.order_id !== null),
      JSON.stringify(after),
    ).toBe(true);
  });
});
