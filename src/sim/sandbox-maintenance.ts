// The sandbox's sites, assets and maintenance plans (issue 34): three stores in Texas with a rooftop unit
// each on a quarterly HVAC filter change (one store a month, so some planned work is always near), and a
// backflow preventer at the first with its yearly test in April. Created once, on the start that finds
// the sandbox account without any site (archived ones included): what the account changes later stays.
// Made by the operations themselves, in the sandbox account's name, each sealed as system:bootstrap;
// the generator then turns the occurrences inside their horizon into sandbox orders like any plan's.

import { SANDBOX_ACCOUNT } from "../auth/sandbox-key.js";
import { localDateOf } from "../domain/maintenance/local-date.js";
import type { Services } from "../operations/kernel/operation.js";
import { accountPrincipal, serviceContext } from "../operations/kernel/service-context.js";
import { planCreateOperation } from "../operations/maintenance/plans.js";
import { assetCreateOperation } from "../operations/sites/assets.js";
import { siteCreateOperation } from "../operations/sites/sites.js";

const ACTOR = "system:bootstrap" as const;
const STORE_HOURS = "mon-sat 07:00-21:00; sun 09:00-18:00";

const STORES = [
  { name: "Store #12 Austin", address: "500 Congress Ave", city: "Austin", state: "TX", zip: "78701" },
  { name: "Store #31 Dallas", address: "1500 Main St", city: "Dallas", state: "TX", zip: "75201" },
  { name: "Store #47 Houston", address: "800 Travis St", city: "Houston", state: "TX", zip: "77002" },
] as const;

/** The first day of the month `months` after `date`'s (YYYY-MM-DD). */
function monthStart(date: string, months: number): string {
  const [y, m] = date.split("-").map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + months, 1));
  return d.toISOString().slice(0, 10);
}

/** Seeds the sandbox account's sites, assets and plans once; how many plans it created (0 when it had sites). */
export async function seedSandboxMaintenance(services: Services): Promise<number> {
  const account = await services.store.keys.findAccountByName(SANDBOX_ACCOUNT);
  if (!account) return 0;
  const existing = await services.store.sites.sites({
    accountId: account.id,
    livemode: false,
    includeArchived: true,
    limit: 1,
  });
  if (existing.length > 0) return 0;
  const principal = accountPrincipal(account.id, false, "bootstrap");
  const run = async <I, O>(
    op: { input: { parse(v: unknown): I }; handler(ctx: never, input: I): Promise<O> },
    input: unknown,
  ) => op.handler(serviceContext(services, principal, ACTOR, input) as never, op.input.parse(input));
  const today = localDateOf(services.now(), "America/Chicago");
  let plans = 0;
  for (const [i, store] of STORES.entries()) {
    const site = (await run(siteCreateOperation, {
      ...store,
      hours: STORE_HOURS,
      access_notes: "Roof access by the ladder in the stockroom; ask the manager on duty for the key.",
      contact: { name: "Store manager", phone: "+1 512 555 0100", email: `store${i + 1}@sandbox.example` },
    })) as { site_id: string };
    const rtu = (await run(assetCreateOperation, {
      site_id: site.site_id,
      trade: "hvac",
      type: "rtu",
      make: "Carrier",
      model: "48FC-06",
      serial: `SBX-RTU-${i + 1}`,
      installed_on: "2021-03-15",
      warranty_ends_on: i === 0 ? "2031-03-14" : "2026-03-14",
      tags: ["roof"],
    })) as { asset_id: string };
    await run(planCreateOperation, {
      site_id: site.site_id,
      asset_id: rtu.asset_id,
      trade: "hvac",
      name: "Quarterly HVAC filter change",
      description: "Replace the rooftop unit's air filters, check the belts and the condensate drain.",
      duration_minutes: 90,
      recurrence: "FREQ=MONTHLY;INTERVAL=3;BYDAY=2TU",
      // One store a month: the three stores' visits take turns.
      starts_on: monthStart(today, i),
      window: { days: ["tue", "wed"], start: "07:00", end: "11:00" },
      horizon_days: 45,
    });
    plans++;
    if (i === 0) {
      const backflow = (await run(assetCreateOperation, {
        site_id: site.site_id,
        trade: "plumbing",
        type: "backflow_preventer",
        make: "Watts",
        model: "LF909",
        serial: "SBX-BFP-1",
        installed_on: "2019-06-01",
        tags: ["mechanical room"],
      })) as { asset_id: string };
      await run(planCreateOperation, {
        site_id: site.site_id,
        asset_id: backflow.asset_id,
        trade: "plumbing",
        name: "Yearly backflow test",
        description: "Test the backflow preventer and file the report with the city.",
        duration_minutes: 60,
        recurrence: "FREQ=YEARLY;BYMONTH=4;BYDAY=1TU",
        window: { days: ["tue", "wed", "thu"], start: "08:00", end: "12:00" },
        horizon_days: 30,
      });
      plans++;
    }
  }
  return plans;
}
