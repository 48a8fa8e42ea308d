// The optimised day's proposal body (POST /api/dispatcher/v1/schedule/optimize, its schema in
// operations/pool/schedule.ts) from a plan: each contractor's route as the proposal shows it, each stop
// marked against who holds its order now, the jobs left out and the totals. Built on the planner's thread
// (operations/kernel/day-planner-thread.ts) beside the plan, with its hash, so that a 3,000-job day's
// proposal is neither built nor hashed on the server's event loop.

import type { DayContractor, DayJob, DayPlan } from "./day.js";

type Reason = "no_contractor" | "contractor_unavailable" | "no_feasible_slot" | "no_location" | "time_limit";

/** What the proposal says besides the plan: the call's day and search, and the jobs left out before the
 * planning (no location), listed first among the unassigned. */
export interface ProposalFrame {
  readonly date: string;
  readonly state: string | null;
  readonly mode: "incremental" | "full";
  readonly livemode: boolean;
  readonly generated_at: string;
  readonly expires_at: string;
  readonly unassigned: ReadonlyArray<{ readonly order_id: string; readonly reason: Reason }>;
  readonly assumptions: string;
  readonly search: { readonly seed: number; readonly iterations: number; readonly time_limit_ms: number };
}

/** The proposal without its id and hash, its keys in the order the response shows them. */
export interface ProposalBody {
  date: string;
  state: string | null;
  mode: "incremental" | "full";
  livemode: boolean;
  generated_at: string;
  expires_at: string;
  routes: Array<{
    contractor_id: string;
    shift_start: string;
    shift_end: string;
    stops: Array<{
      order_id: string;
      arrive_at: string;
      start_at: string;
      end_at: string;
      travel_minutes: number;
      change: "kept" | "moved" | "assigned";
    }>;
    travel_minutes: number;
    idle_minutes: number;
  }>;
  unassigned: Array<{ order_id: string; reason: Reason }>;
  totals: {
    jobs: number;
    served: number;
    unassigned: number;
    travel_minutes: number;
    lateness_minutes: number;
    changes: number;
  };
  assumptions: string;
  search: {
    seed: number;
    iterations: number;
    iterations_run: number;
    time_limit_ms: number;
    stopped: DayPlan["search"]["stopped"];
  };
}

/** The proposal's body: the plan of `jobs` (each job's contractorId: who holds it now) over
 * `contractors` (their shifts), framed by `frame`. */
export function proposalBody(
  plan: DayPlan,
  jobs: readonly DayJob[],
  contractors: readonly DayContractor[],
  frame: ProposalFrame,
): ProposalBody {
  const holder = new Map(jobs.map((j) => [j.orderId, j.contractorId]));
  const shiftOf = new Map(contractors.map((c) => [c.id, c]));
  let changes = 0;
  const routes = plan.routes.map((r) => {
    const c = shiftOf.get(r.contractorId) as DayContractor;
    return {
      contractor_id: r.contractorId,
      shift_start: c.shiftStart.toISOString(),
      shift_end: c.shiftEnd.toISOString(),
      stops: r.stops.map((s) => {
        const had = holder.get(s.orderId) ?? null;
        const change =
          had === r.contractorId
            ? ("kept" as const)
            : had === null
              ? ("assigned" as const)
              : ("moved" as const);
        if (change !== "kept") changes++;
        return {
          order_id: s.orderId,
          arrive_at: s.arriveAt.toISOString(),
          start_at: s.startAt.toISOString(),
          end_at: s.endAt.toISOString(),
          travel_minutes: s.travelMinutes,
          change,
        };
      }),
      travel_minutes: r.travelMinutes,
      idle_minutes: r.idleMinutes,
    };
  });
  const unassigned = [
    ...frame.unassigned,
    ...plan.unassigned.map((u) => ({ order_id: u.orderId, reason: u.reason })),
  ];
  const served = routes.reduce((n, r) => n + r.stops.length, 0);
  return {
    date: frame.date,
    state: frame.state,
    mode: frame.mode,
    livemode: frame.livemode,
    generated_at: frame.generated_at,
    expires_at: frame.expires_at,
    routes,
    unassigned,
    totals: {
      jobs: served + unassigned.length,
      served,
      unassigned: unassigned.length,
      travel_minutes: plan.travelMinutes,
      lateness_minutes: 0,
      changes,
    },
    assumptions: frame.assumptions,
    search: {
      seed: frame.search.seed,
      iterations: frame.search.iterations,
      iterations_run: plan.search.iterations,
      time_limit_ms: frame.search.time_limit_ms,
      stopped: plan.search.stopped,
    },
  };
}
