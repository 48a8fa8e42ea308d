// An account's own planned-maintenance compliance (issue 34): the public evals' figure
// (evals/figures/maintenance.ts) over the caller's occurrences of its key's mode, per rolling period, with
// the same methodology and provenance.

import { z } from "zod";
import { EVAL_PERIODS, PERIOD_NAMES, type Period, plannedMaintenanceSchema } from "../evals/evals.js";
import {
  MAINTENANCE_METHODOLOGY,
  maintenanceFigures,
  maintenanceProvenance,
} from "../evals/figures/maintenance.js";
import { entriesAt } from "../evals/figures/provenance.js";
import { defineOperation, principalOf } from "../kernel/operation.js";

const ZERO = { ended: 0, skipped: 0, completed_in_window: 0, completed_late: 0, failed: 0 };

export const maintenanceComplianceOperation = defineOperation({
  id: "dispatchMaintenanceCompliance",
  name: "dispatch.maintenance_compliance",
  summary: "Your planned-maintenance compliance",
  description:
    "Of your maintenance plans' occurrences whose window ended in the rolling period (rolling_7d, " +
    "rolling_30d, rolling_90d), not skipped: how many were done within their window (compliance_rate), done " +
    "late, not done, or could not be generated, overall and per site; your key's mode only. The public evals publish the same " +
    "figure over every account's live plans.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/maintenance/compliance", input: "query" },
  input: z.strictObject({
    period: z
      .enum(PERIOD_NAMES as [Period, ...Period[]], {
        error: `period must be one of: ${PERIOD_NAMES.join(", ")}`,
      })
      .default("rolling_30d"),
  }),
  output: z
    .object({
      period: z.string(),
      window: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }),
      livemode: z.boolean(),
      planned_maintenance: plannedMaintenanceSchema,
      by_site: z
        .array(
          z.object({
            site_id: z.string(),
            site_name: z.string().nullable(),
            planned_maintenance: plannedMaintenanceSchema,
          }),
        )
        .describe(
          "The same figures per site: every site with an active plan, and any other whose occurrences ended " +
            "in the period; by site name.",
        ),
      methodology: z.string(),
      provenance: z.record(
        z.string(),
        z.object({
          source: z.string(),
          formula: z.string(),
          sample_size: z.number().int().nullable(),
          computed_at: z.iso.datetime(),
          note: z.string().optional(),
        }),
      ),
    })
    .meta({ id: "MaintenanceCompliance" }),
  example: { period: "rolling_90d" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const at = ctx.services.now();
    const start = new Date(at.getTime() - EVAL_PERIODS[input.period] * 86_400_000);
    const { store } = ctx.services;
    const filter = {
      livemode: principal.livemode,
      accountId: principal.accountId,
      since: start.toISOString(),
      until: new Date(at.getTime() + 1).toISOString(),
    };
    const [counts, bySite, plans] = await Promise.all([
      store.maintenance.complianceCounts(filter),
      store.maintenance.complianceBySite(filter),
      store.maintenance.plans({ livemode: principal.livemode, accountId: principal.accountId, limit: 5000 }),
    ]);
    const perSite = new Map(bySite.map((r) => [r.siteId, r.counts]));
    for (const p of plans) if (!perSite.has(p.siteId)) perSite.set(p.siteId, ZERO);
    const sites = await Promise.all(
      [...perSite.entries()].map(async ([siteId, c]) => ({
        site_id: siteId,
        site_name: (await store.sites.siteById(siteId))?.name ?? null,
        planned_maintenance: maintenanceFigures(c),
      })),
    );
    sites.sort(
      (a, b) => (a.site_name ?? "").localeCompare(b.site_name ?? "") || a.site_id.localeCompare(b.site_id),
    );
    const computedAt = at.toISOString();
    return {
      period: input.period,
      window: { start: start.toISOString(), end: computedAt },
      livemode: principal.livemode,
      planned_maintenance: maintenanceFigures(counts),
      by_site: sites,
      methodology: MAINTENANCE_METHODOLOGY,
      provenance: maintenanceProvenance(counts, entriesAt(computedAt)),
    };
  },
});
