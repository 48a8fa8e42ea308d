// Order rows as they stand at the end of their lives, for the benchmarks that fill a store in bulk
// (bench/evals.ts, bench/history-store.ts): every column the evals read, with a promise (respond/arrive
// by or a window) kept or breached, statuses in the proportions of a working account. Pure: it imports
// nothing of the service, so bench/evals.ts runs against older builds too.

/** A small deterministic generator (mulberry32), so every run builds the same orders. */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const COLUMNS = [
  "id",
  "account_id",
  "livemode",
  "status",
  "trade",
  "urgency",
  "state",
  "description",
  "nte_cents",
  "contractor_id",
  "estimated_cost_cents",
  "currency",
  "received_at",
  "matched_at",
  "dispatch_latency_ms",
  "created_at",
  "updated_at",
  "accepted_at",
  "completed_at",
  "final_cost_cents",
  "nte_approved_cents",
  "invoice_cents",
  "invoiced_at",
  "override_count",
  "matching_time_ms",
  "first_accepted_at",
  "offers_made",
  "offers_declined",
  "offers_expired",
  "accepted_offer_attempt",
  "manual_dispatch_count",
  "redispatch_count",
  "respond_by",
  "arrive_by",
  "window_start",
  "window_end",
  "on_site_at",
  "sla_respond_breached_at",
  "sla_arrive_breached_at",
] as const;

export const URGENCIES = ["emergency", "urgent", "routine", "scheduled"] as const;
const TERMINAL = ["completed", "invoiced", "cancelled", "cannot_complete"];

/** One order as it stands at the end of its life so far, received at `received` (ms); `settled`: its life is
 * over (an open status drawn is invoiced instead). */
export function order(
  i: number,
  received: number,
  rnd: () => number,
  account: string,
  settled = false,
): unknown[] {
  const u = rnd();
  const drawn =
    u < 0.6
      ? "invoiced"
      : u < 0.68
        ? "completed"
        : u < 0.71
          ? "accepted"
          : u < 0.72
            ? "en_route"
            : u < 0.73
              ? "on_site"
              : u < 0.745
                ? "offered"
                : u < 0.76
                  ? "needs_dispatcher"
                  : u < 0.84
                    ? "cancelled"
                    : u < 0.87
                      ? "cannot_complete"
                      : "invoiced";
  // `settled`: an order long finished, as every order of a past month is: no open status.
  const status = settled && !TERMINAL.includes(drawn) ? "invoiced" : drawn;
  const iso = (ms: number) => new Date(ms).toISOString();
  // 2 % found no contractor when received; those not waiting any more were assigned by a dispatcher.
  const unmatched = status === "needs_dispatcher" || rnd() < 0.02;
  const overrides =
    status === "needs_dispatcher" ? 0 : unmatched ? 1 : rnd() < 0.02 ? 1 + Math.floor(rnd() * 2) : 0;
  // To the first offer committed: a group commit's sync, 0.3-5 ms; the in-memory match alone, 10-100 us.
  const offerMs = unmatched ? null : Math.exp(Math.log(0.3) + rnd() * Math.log(5 / 0.3));
  const matchingMs = Math.exp(Math.log(0.01) + rnd() * Math.log(10));
  const wasAccepted =
    !["offered", "needs_dispatcher"].includes(status) && (status !== "cancelled" || rnd() < 0.6);
  const acceptAfter = Math.round(Math.exp(Math.log(60_000) + rnd() * Math.log(60)) * (overrides ? 4 : 1));
  // An override after the first acceptance moves the last one later.
  const reassignedAfter = overrides && !unmatched ? Math.round(rnd() * 3_600_000) : 0;
  // The cascade: a declined or expired offer before the one accepted, now and then.
  const retries = unmatched ? 0 : rnd() < 0.15 ? 1 : 0;
  const retryDeclined = rnd() < 0.45 ? retries : 0;
  const hasNte = rnd() < 0.7;
  const nte = hasNte ? 15_000 + Math.floor(rnd() * 45_000) : null;
  const approved = hasNte && rnd() < 0.05 ? Math.round((nte as number) * 1.3) : null;
  const done = status === "completed" || status === "invoiced";
  const inForce = approved ?? nte;
  const cost = done ? Math.round((nte ?? 30_000) * (0.6 + rnd() * 0.65)) : null;
  const invoice = status === "invoiced" ? Math.min(cost as number, inForce ?? Number.MAX_SAFE_INTEGER) : null;
  // The promise: scheduled work has a window (a day later, 4 hours), the rest respond within 1 hour and
  // arrive within 4. On site (a contractor arrived) for on_site and finished orders, mostly on time; the
  // watch has recorded the breach of every open order's clock whose deadline passed.
  const urgency = URGENCIES[Math.floor(rnd() * URGENCIES.length)] as string;
  const windowed = urgency === "scheduled";
  const respondBy = windowed ? null : received + 3_600_000;
  const arriveBy = windowed ? received + 86_400_000 + 14_400_000 : received + 14_400_000;
  const arrivalAt = (windowed ? received + 86_400_000 : received + acceptAfter) + (rnd() - 0.8) * 3_600_000;
  const arrived = status === "on_site" || done;
  const open = !["completed", "invoiced", "cancelled", "cannot_complete"].includes(status);
  return [
    `ord_bench${i.toString(36).padStart(8, "0")}`,
    account,
    1,
    status,
    "plumbing",
    urgency,
    "CA",
    "bench order",
    nte,
    status === "needs_dispatcher" ? null : "ctr_bench",
    30_000,
    "USD",
    iso(received),
    offerMs === null ? null : iso(received + Math.ceil(offerMs)),
    offerMs,
    iso(received),
    iso(received),
    wasAccepted ? iso(received + acceptAfter + reassignedAfter) : null,
    done ? iso(received + acceptAfter + 7_200_000) : null,
    cost,
    approved,
    invoice,
    status === "invoiced" ? iso(received + acceptAfter + 9_000_000) : null,
    overrides,
    matchingMs,
    wasAccepted ? iso(received + acceptAfter) : null,
    unmatched ? 0 : 1 + retries,
    retryDeclined,
    retries - retryDeclined,
    wasAccepted && !unmatched && overrides === 0 ? 1 + retries : null,
    unmatched && status !== "needs_dispatcher" ? 1 : 0,
    0,
    respondBy === null ? null : iso(respondBy),
    windowed ? null : iso(arriveBy),
    windowed ? iso(received + 86_400_000) : null,
    windowed ? iso(arriveBy) : null,
    arrived ? iso(arrivalAt) : null,
    open && !wasAccepted && respondBy !== null ? iso(respondBy) : null,
    open && !arrived ? iso(arriveBy) : null,
  ];
}
