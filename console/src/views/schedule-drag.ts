// The schedule's drag and drop, apart from the DOM: where a point on a lane falls in time (snapped to a
// quarter hour), what the console can tell before a drop (a lane without the trade or not active, a start
// outside working hours, on time off, or over another job), and which public operations a drop makes:
//
// - a queued order dropped on a lane: dispatcher.assign with `start` (its window moved first with
//   dispatcher.reschedule when the start lies outside it, keeping the window's length);
// - a block dropped on its own lane at another time: dispatcher.reschedule with `start` (inside the window:
//   the same window; outside it: a window of the same length starting there);
// - a block dropped on another lane: dispatcher.assign with `start` (a reassignment; inside the window).
//
// The server decides: what the console can tell is shown while dragging, and a refusal it could not tell
// comes back from the operation and is shown on the lane. Nothing here imports the DOM or Preact.

export interface Span {
  start: string;
  end: string;
}

/** What the console knows of a lane while dragging over it. */
export interface DropLane {
  contractor_id: string;
  name: string;
  standing: "active" | "inactive" | "excluded";
  trades: readonly string[];
  day: Span;
  working: readonly Span[];
  time_off: readonly Span[];
  jobs: ReadonlyArray<{ order_id: string; start: string; end: string }>;
}

/** The order being dragged. */
export interface DragJob {
  order_id: string;
  trade: string;
  urgency: string;
  /** What a person reads: "Plumbing · Austin". */
  label: string;
  /** How long the contractor's job takes, in ms. */
  durationMs: number;
  /** Its arrival window (routine and scheduled work), else null. */
  window: { start: number; end: number } | null;
  /** Where it is on the schedule now (a held block), or null (from the queue). */
  from: { contractor_id: string; start: number } | null;
}

export const SNAP_MS = 15 * 60_000;

/** The start a point at `fraction` (0-1) of the lane's day gives a block held `grabMs` after its start,
 * snapped to the quarter hour from the day's start and kept on the day. */
export function instantAt(day: Span, fraction: number, grabMs = 0): number {
  const from = Date.parse(day.start);
  const until = Date.parse(day.end);
  const f = Math.min(1, Math.max(0, fraction));
  const raw = from + f * (until - from) - grabMs;
  return Math.min(until - SNAP_MS, Math.max(from, from + Math.round((raw - from) / SNAP_MS) * SNAP_MS));
}

/** Moves a start by `steps` quarter hours, kept on the lane's day. */
export function nudge(day: Span, start: number, steps: number): number {
  const from = Date.parse(day.start);
  const until = Date.parse(day.end);
  return Math.min(until - SNAP_MS, Math.max(from, start + steps * SNAP_MS));
}

export type LaneFit =
  | { ok: true }
  | { ok: false; why: "trade" | "standing" | "outside_hours" | "time_off" | "overlap"; text: string };

const overlaps = (a0: number, a1: number, b0: number, b1: number) => a0 < b1 && b0 < a1;

/** Whether the lane can take the job at all (its trade, its standing): a lane that cannot is dimmed. */
export function laneTakes(lane: DropLane, job: DragJob): LaneFit {
  if (lane.standing !== "active") {
    return { ok: false, why: "standing", text: `${lane.name} is ${lane.standing}.` };
  }
  if (!lane.trades.includes(job.trade)) {
    return { ok: false, why: "trade", text: `${lane.name} does not do ${job.trade.replace(/_/g, " ")}.` };
  }
  return { ok: true };
}

/** What the console can tell of the job placed on the lane at `start` (the server has the last word). */
export function fitAt(lane: DropLane, job: DragJob, start: number): LaneFit {
  const takes = laneTakes(lane, job);
  if (!takes.ok) return takes;
  const end = start + job.durationMs;
  const off = lane.time_off.find((o) => overlaps(start, end, Date.parse(o.start), Date.parse(o.end)));
  if (off) return { ok: false, why: "time_off", text: `${lane.name} is on time off then.` };
  const inHours = lane.working.some((w) => Date.parse(w.start) <= start && end <= Date.parse(w.end));
  if (!inHours) return { ok: false, why: "outside_hours", text: `Outside ${lane.name}'s working hours.` };
  const other = lane.jobs.find(
    (j) => j.order_id !== job.order_id && overlaps(start, end, Date.parse(j.start), Date.parse(j.end)),
  );
  if (other) return { ok: false, why: "overlap", text: `Over another of ${lane.name}'s jobs.` };
  return { ok: true };
}

export interface DropStep {
  path: "/api/dispatcher/v1/orders/assign" | "/api/dispatcher/v1/orders/reschedule";
  body: Record<string, unknown>;
}

/** The operations a drop makes, in order; or why the console does not send it. */
export function planDrop(
  job: DragJob,
  contractorId: string,
  start: number,
  reason: string,
): { steps: DropStep[] } | { refused: string } {
  const why = reason.trim();
  if (why === "") return { refused: "Say why first: the reason goes to the audit log with the change." };
  const iso = new Date(start).toISOString();
  const inWindow = job.window === null || (job.window.start <= start && start < job.window.end);
  const moved = () => {
    const length = job.window ? Math.max(job.window.end - job.window.start, job.durationMs) : job.durationMs;
    return { start: iso, end: new Date(start + length).toISOString() };
  };
  const assign: DropStep = {
    path: "/api/dispatcher/v1/orders/assign",
    body: { order_id: job.order_id, contractor_id: contractorId, start: iso, reason: why },
  };
  if (job.from === null) {
    if (inWindow) return { steps: [assign] };
    return {
      steps: [
        {
          path: "/api/dispatcher/v1/orders/reschedule",
          body: { order_id: job.order_id, service_window: moved(), reason: why },
        },
        assign,
      ],
    };
  }
  if (job.from.contractor_id === contractorId) {
    if (job.from.start === start) return { steps: [] };
    if (job.window === null) {
      return {
        refused: `${job.label} is ${job.urgency} work, as soon as possible: its time is not moved. Drop it on another lane to reassign it.`,
      };
    }
    const window = job.window;
    return {
      steps: [
        {
          path: "/api/dispatcher/v1/orders/reschedule",
          body: {
            order_id: job.order_id,
            service_window: inWindow
              ? { start: new Date(window.start).toISOString(), end: new Date(window.end).toISOString() }
              : moved(),
            start: iso,
            reason: why,
          },
        },
      ],
    };
  }
  if (!inWindow) {
    return {
      refused: `That is outside ${job.label}'s arrival window: drop it within the window, or move it on its own lane first.`,
    };
  }
  return { steps: [assign] };
}
