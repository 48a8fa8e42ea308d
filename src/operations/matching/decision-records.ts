// What the audit log records of the dispatch decisions, built from the same values the decision used.
// Shared by quotes and orders so both record candidates the same way.

import { z } from "zod";
import type { MatchResult } from "../../domain/matching.js";

/** Six decimals: as precise as a score needs to be read, and much shorter (and cheaper) to serialise. */
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * The ranked candidates of a match: ids, scores and the figures behind them. Keys are written in
 * canonical (sorted) order: the candidates are most of a record, and the sealer serialises objects
 * already in order without copying them.
 */
export function matchDecision(result: MatchResult) {
  return {
    candidates: result.ranked.map((c) => ({
      components: roundedSorted(c.components),
      contractor_id: c.contractor.id,
      distance_miles: c.distanceMiles === null ? null : Math.round(c.distanceMiles * 10) / 10,
      eta_minutes: c.etaMinutes,
      eta_tier: c.etaTier,
      price_cents: c.price.total_cents,
      score: round6(c.score),
      within_nte: c.withinNte,
    })),
    considered: result.considered,
    eligible: result.eligible,
    rejected: result.rejected,
  };
}

/** The values rounded, keys in sorted order (the matcher already lists them so: then no sort is needed). */
function roundedSorted(values: object): Record<string, number> {
  const source = values as Record<string, number>;
  let keys = Object.keys(source);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) >= (keys[i] as string)) {
      keys = keys.sort();
      break;
    }
  }
  const out: Record<string, number> = {};
  for (const key of keys) out[key] = round6(source[key] as number);
  return out;
}

export const sealSchema = z
  .string()
  .describe("Seal of the audit record of this decision: verify it at GET /api/attest/verify/{seal}.");

export const sealRefSchema = z
  .object({
    seal: z.string(),
    kind: z.string().describe("The decision recorded: order.created, order.matched, order.unmatched, ..."),
    at: z.iso.datetime(),
    verify_url: z.url(),
  })
  .meta({ id: "SealRef" });

export type SealRef = z.infer<typeof sealRefSchema>;

export function verifyUrl(baseUrl: string, seal: string): string {
  return `${baseUrl}/api/attest/verify/${seal}`;
}

export function sealRef(baseUrl: string, seal: string, kind: string, at: string): SealRef {
  return { seal, kind, at, verify_url: verifyUrl(baseUrl, seal) };
}
