// `npm run cli -- simulate`: drives realistic traffic through the real operations over days of virtual
// time (src/sim/), then prints what happened. Its orders are the demo evals show, and the load benchmarks
// start from.

import { randomInt } from "node:crypto";
import { parseArgs } from "node:util";
import type { Config } from "../config.js";
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_SIM_ACCOUNT,
  runSimulation,
  type SimulationOptions,
  type SimulationReport,
} from "../sim/simulation.js";
import type { Store } from "../storage/store.js";

export const SIMULATE_USAGE = `  simulate [--days <n>] [--orders-per-day <n>] [--seed <n>] [--start <ISO time>]
           [--account <name>] [--concurrency <n>] [--force] [--json]
                                          drive realistic live traffic through the operations over
                                          --days (30) of virtual time ending now, or from --start:
                                          --orders-per-day (500) orders; contractors accept, decline,
                                          go silent, finish over or under the NTE; dispatchers
                                          override. Orders belong to --account (simulation); the same
                                          --seed and --start replay the same run. Refuses a store where
                                          other accounts have live orders unless --force; imports a
                                          generated live pool when the pool is empty; revokes its keys
                                          at the end. Stop servers using the store first. --json: the
                                          summary as JSON. See docs/simulator.md
`;

export type ParsedSimulateArgs =
  | { ok: true; options: SimulationOptions; json: boolean }
  | { ok: false; error: string };

function count(value: string | undefined, name: string, fallback: number, max: number): number | string {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) <= 0 || Number(value) > max) {
    return `${name} must be a whole number from 1 to ${max}`;
  }
  return Number(value);
}

/** Parses the command's arguments; the run's clock is read here (`now`, for tests). */
export function parseSimulateArgs(args: string[], now = new Date()): ParsedSimulateArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        days: { type: "string" },
        "orders-per-day": { type: "string" },
        seed: { type: "string" },
        start: { type: "string" },
        account: { type: "string" },
        concurrency: { type: "string" },
        force: { type: "boolean" },
        json: { type: "boolean" },
      },
    }));
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  const str = (name: string) => values[name] as string | undefined;
  const days = count(str("days"), "--days", 30, 3650);
  const perDay = count(str("orders-per-day"), "--orders-per-day", 500, 100_000);
  const concurrency = count(str("concurrency"), "--concurrency", DEFAULT_CONCURRENCY, 4096);
  for (const v of [days, perDay, concurrency]) if (typeof v === "string") return { ok: false, error: v };
  const seedText = str("seed");
  if (seedText !== undefined && (!/^\d+$/.test(seedText) || Number(seedText) > 0xffffffff)) {
    return { ok: false, error: "--seed must be a whole number from 0 to 4294967295" };
  }
  const seed = seedText === undefined ? randomInt(0, 2 ** 31) : Number(seedText);
  let end = now;
  const startText = str("start");
  if (startText !== undefined) {
    const start = new Date(startText);
    if (Number.isNaN(start.getTime())) return { ok: false, error: "--start must be an ISO 8601 time" };
    end = new Date(start.getTime() + (days as number) * 86_400_000);
    if (end > now) {
      return {
        ok: false,
        error: `--start plus --days ends at ${end.toISOString()}, after now: simulated orders are never dated in the future`,
      };
    }
  }
  const account = str("account") ?? DEFAULT_SIM_ACCOUNT;
  if (!/^[\w.-]{1,64}$/.test(account))
    return { ok: false, error: "--account must be 1-64 letters, digits, . _ -" };
  return {
    ok: true,
    json: values.json === true,
    options: {
      days: days as number,
      ordersPerDay: perDay as number,
      seed,
      account,
      force: values.force === true,
      end,
      concurrency: concurrency as number,
    },
  };
}

function line(label: string, text: string): string {
  return `${label.padEnd(12)}${text}\n`;
}

/** The summary a person reads after a run. */
export function formatReport(report: SimulationReport, evalsUrl: string): string {
  const c = report.counters;
  const seconds = report.wallMs / 1000;
  const statuses = Object.entries(report.statuses)
    .sort(([, a], [, b]) => b - a)
    .map(([s, n]) => `${s} ${n}`)
    .join(", ");
  const overrides = c.overridesAssigned + c.overridesAfterFailure + c.overridesReassigned;
  const refused = Object.entries(report.operations.refused)
    .map(([what, n]) => `${what} ${n}`)
    .join(", ");
  const topOps = Object.entries(report.operations.byName)
    .sort(([, a], [, b]) => b - a)
    .map(([name, n]) => `${name} ${n}`)
    .join(", ");
  return (
    `simulated ${report.days} days (${report.window.start} to ${report.window.end}) for account ` +
    `${report.account}; replay with --seed ${report.seed} --start ${report.window.start}\n` +
    line(
      "pool",
      `${report.pool.liveContractors} active live contractors${report.pool.imported ? ` (${report.pool.imported} generated and imported)` : ""}; ${report.keysIssued} simulator keys issued and revoked`,
    ) +
    line(
      "orders",
      `${c.ordersCreated} created (${c.unmatchedAtCreation} with no eligible contractor at creation)`,
    ) +
    line("statuses", statuses || "none") +
    line(
      "offers",
      `${c.offersAccepted} accepted, ${c.offersDeclined} declined, ${c.offersExpired} expired unanswered (${report.sweeps} settled by the sweep)`,
    ) +
    line(
      "overrides",
      `${overrides} by dispatchers: ${c.overridesAssigned} assigned from needs_dispatcher, ${c.overridesAfterFailure} after cannot_complete, ${c.overridesReassigned} reassigned`,
    ) +
    line(
      "cancels",
      `${c.callerCancels} by callers, ${c.dispatcherCancels} by dispatchers; ${c.cannotComplete} cannot_complete reports`,
    ) +
    line(
      "NTE",
      `${c.nteRequests} increase requests (${c.nteApproved} approved, ${c.nteRejected} rejected); completed ${c.completedWithinNte} within the NTE, ${c.completedOverNte} over it, ${c.completedWithoutNte} without one`,
    ) +
    line("invoices", `${c.invoices}`) +
    line(
      "proof",
      `${c.proofPhotos} jobs with a photo, ${c.proofSignatures} with the site contact's signature; ${c.checklistsAnswered} checklists answered`,
    ) +
    line(
      "operations",
      `${report.operations.total} in ${seconds.toFixed(1)} s: ${Math.round(report.operations.total / Math.max(seconds, 0.001))} operations/s`,
    ) +
    line("", topOps) +
    line(
      "refused",
      `${refused || "none"}${c.ordersStuck ? `; ${c.ordersStuck} orders stopped on a refusal` : ""}`,
    ) +
    `see the evals: start the server on this store (npm start, same DATA_DIR or DATABASE_URL) and open ${evalsUrl}\n`
  );
}

/** Runs the command on an open, migrated store; answers the exit code. */
export async function simulateCommand(
  store: Store,
  config: Config,
  options: SimulationOptions,
  json: boolean,
): Promise<number> {
  const report = await runSimulation(store, config, {
    ...options,
    progress: (text) => process.stderr.write(`${text}\n`),
  });
  const base = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
  const evalsUrl = `${base}/api/dispatch/analytics/evals?period=rolling_${report.days <= 7 ? 7 : report.days <= 30 ? 30 : 90}d`;
  process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, evalsUrl));
  return report.counters.ordersStuck > 0 ? 1 : 0;
}
