// The dispatch team's Schedule (issue 31): a lane per contractor over one day (dispatch.schedule_lanes),
// its working hours and time off shaded, each job it holds a block from its start to its end coloured by
// status and flagged at risk or breached, the current time as a line; beside the lanes, the queue of
// orders that need a dispatcher, most urgent and nearest deadline first (the board's orders, live); and
// the optimiser: "Optimise day" (dispatch.schedule_optimize) draws the proposal over the lanes, Apply
// (dispatch.schedule_apply) carries it out and lists each job's outcome. Drag and drop (schedule-drag.ts
// says which operations a drop makes): a queued order dropped on a lane at a time is assigned there, a block
// dragged along its lane is rescheduled, onto another lane reassigned; the same with the keyboard (Space
// picks up, arrows move, Enter drops, Escape cancels). While dragging, a lane that cannot take the job is
// dimmed and the place under the pointer says what the console can tell (outside hours, time off, over
// another job); the drop shows at once (optimistic) and the server's refusal, if any, on the lane.

import { computed, signal, useComputed } from "@preact/signals";
import { Component, Fragment } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { isPlannedReference } from "../../../src/domain/maintenance/plan";
import { ORDER_EVENT_TYPES } from "../../../src/domain/orders/statuses";
import { CONTRACTOR_CHANGED_EVENT } from "../../../src/domain/pool-events";
import { URGENCIES } from "../../../src/domain/pricing";
import { TRADE_CODES, TRADES, type TradeCode } from "../../../src/domain/trades";
import { ApiProblem, get, post } from "../api";
import { duration, minute, place, relative, STATUS_LABEL, titleCase, zoned, zonedSpan } from "../format";
import { subscribe } from "../live";
import type { Order, OrderStatus } from "../types";
import { boardOrders, slaFlag } from "./board";
import {
  type DragJob,
  fitAt,
  instantAt,
  type LaneFit,
  laneTakes,
  nudge,
  planDrop,
  SNAP_MS,
} from "./schedule-drag";
import { PlannedBadge, StatusPill } from "./status";

interface Span {
  start: string;
  end: string;
}

type Standing = "on_track" | "at_risk" | "breached" | "met";

interface LaneJob {
  order_id: string;
  status: OrderStatus;
  trade: string;
  urgency: string;
  start: string;
  end: string;
  /** The drive before it, as the capacity ledger counts it: from the job before, else from the base. */
  travel_minutes: number;
  travel_start: string;
  travel_from_order_id: string | null;
  city: string | null;
  state: string;
  account_name: string | null;
  /** A maintenance plan's order (planned work). */
  planned: boolean;
  service_level: Standing | null;
}

interface Lane {
  contractor_id: string;
  name: string;
  standing: "active" | "inactive" | "excluded";
  trades: string[];
  states: string[];
  time_zone: string;
  base_time_zone: string;
  day: Span;
  working: Span[];
  time_off: Span[];
  max_active_jobs: number;
  held_minutes: number;
  jobs: LaneJob[];
}

interface LanePage {
  date: string;
  time_zone: string | null;
  total: number;
  lanes: Lane[];
  next_cursor: string | null;
}

interface Stop {
  order_id: string;
  arrive_at: string;
  start_at: string;
  end_at: string;
  travel_minutes: number;
  change: "kept" | "moved" | "assigned";
}

interface Proposal {
  proposal_id: string;
  date: string;
  state: string | null;
  routes: Array<{ contractor_id: string; stops: Stop[]; travel_minutes: number }>;
  unassigned: Array<{ order_id: string; reason: string }>;
  totals: { jobs: number; served: number; unassigned: number; travel_minutes: number; changes: number };
}

interface Applied {
  assignments: Array<{
    order_id: string;
    contractor_id: string;
    outcome: "assigned" | "refused";
    reason?: string;
  }>;
  unassigned: Array<{ order_id: string; reason: string }>;
}

const LANES_PAGE = 25;
/** The most lanes the API gives a page. */
const LANES_MAX = 50;
/** The zones a dispatcher may draw every lane in (or each lane's own). */
const ZONES = [
  "America/New_York",
  "America/Chicago",
  "America/Denver",
  "America/Phoenix",
  "America/Los_Angeles",
  "America/Anchorage",
  "Pacific/Honolulu",
];
const HOURS = [0, 3, 6, 9, 12, 15, 18, 21, 24];
/** Statuses the queue shows: work nobody holds, waiting for a dispatcher. */
const QUEUED = new Set<OrderStatus>(["needs_dispatcher", "cannot_complete", "received"]);
const URGENCY_RANK = new Map<string, number>(URGENCIES.map((u, i) => [u, i]));
const STANDING_LABEL: Record<Standing, string> = {
  on_track: "on track",
  at_risk: "at risk",
  breached: "breached",
  met: "met",
};

/** The date of `at` in the browser's zone, YYYY-MM-DD. */
const localDate = (at: number) => new Date(at).toLocaleDateString("en-CA");
const addDays = (date: string, n: number) => {
  const d = new Date(`${date}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
};
const dayName = (date: string) =>
  new Date(`${date}T12:00:00Z`).toLocaleDateString("en-US", {
    weekday: "short",
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });

const formats = new Map<string, Intl.DateTimeFormat>();
/** A zone's formatter of `kind`, made once: making one costs far more than formatting with it, and a day
 * of 200 lanes formats 2,000 blocks' times a few times each. */
function formatIn(zone: string, kind: "clock" | "zone"): Intl.DateTimeFormat {
  const key = `${kind} ${zone}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(
      "en-US",
      kind === "clock"
        ? { timeZone: zone, hour: "numeric", minute: "2-digit" }
        : { timeZone: zone, timeZoneName: "short" },
    );
    formats.set(key, f);
  }
  return f;
}

/** The zone's short name on the day ("CST", "PDT"). */
function zoneShort(zone: string, at: string): string {
  return (
    formatIn(zone, "zone")
      .formatToParts(new Date(at))
      .find((p) => p.type === "timeZoneName")?.value ?? zone
  );
}

const clockIn = (iso: string, zone: string) => formatIn(zone, "clock").format(new Date(iso));

/** Where an instant falls on a lane's day, 0-100 (%), clamped. */
function at(day: Span, iso: string | number): number {
  const from = Date.parse(day.start);
  const until = Date.parse(day.end);
  const t = typeof iso === "number" ? iso : Date.parse(iso);
  return Math.min(100, Math.max(0, ((t - from) / (until - from)) * 100));
}

const spanStyle = (day: Span, s: Span) => {
  const left = at(day, s.start);
  return { left: `${left}%`, width: `${Math.max(0.4, at(day, s.end) - left)}%` };
};

/** The order's nearest deadline: respond-by, arrive-by, its window's start, or its offer's. */
function deadlineOf(o: Order): string | null {
  return o.respond_by ?? o.arrive_by ?? o.arrival_window?.start ?? o.offer_deadline_at ?? null;
}

/** The queue: the board's orders nobody holds, by urgency, then nearest deadline, then oldest. */
const queue = computed(() =>
  [...boardOrders.value.values()]
    .filter((o) => QUEUED.has(o.status))
    .sort(
      (a, b) =>
        (URGENCY_RANK.get(a.urgency) ?? 9) - (URGENCY_RANK.get(b.urgency) ?? 9) ||
        (deadlineOf(a) ?? "~").localeCompare(deadlineOf(b) ?? "~") ||
        a.created_at.localeCompare(b.created_at),
    ),
);

/** The job being dragged (pointer or keyboard), and where it would land. */
const dragging = signal<{ job: DragJob; mode: "pointer" | "keyboard" } | null>(null);
const dragOver = signal<{ contractorId: string; start: number } | null>(null);
/** Drops sent and not yet shown by a read of the lanes: drawn where they were dropped (optimistic). */
interface PendingDrop {
  contractorId: string;
  start: number;
  end: number;
  label: string;
  /** The server took it: the next read of the lanes shows it, and this goes. */
  settled: boolean;
}
const pending = signal<Map<string, PendingDrop>>(new Map());
/** The last drop's outcome on a lane (the server's refusal, or what was done). */
const laneNotes = signal<Map<string, { orderId: string; text: string; refused: boolean }>>(new Map());
/** What a screen reader hears about the drag in progress or the last drop. */
const dragStatus = signal("");
/** The lanes shown, by contractor id, in order (the drag reads them as they are now); the reason a drop
 * sends and how the lanes are read again after it. */
let shownLanes = new Map<string, Lane>();
const dropContext = { reason: "", reload: () => {} };

const DRAGGABLE = new Set<OrderStatus>(["offered", "accepted"]);
const MIN_MS = 60_000;

function setPending(orderId: string, entry: PendingDrop | null) {
  const next = new Map(pending.value);
  if (entry) next.set(orderId, entry);
  else next.delete(orderId);
  pending.value = next;
}

function noteLane(contractorId: string, orderId: string, text: string, refused: boolean) {
  laneNotes.value = new Map([[contractorId, { orderId, text, refused }]]);
  dragStatus.value = text;
}

/** An order of the board as the drag knows it: its trade's job length, its window. */
function dragJobOf(orderId: string, fallback: { trade: string; urgency: string; label: string }): DragJob {
  const o = boardOrders.value.get(orderId);
  const trade = o?.trade ?? fallback.trade;
  const hours = TRADES[trade as TradeCode]?.typicalJobHours ?? 2;
  const window = o?.arrival_window
    ? { start: Date.parse(o.arrival_window.start), end: Date.parse(o.arrival_window.end) }
    : null;
  return {
    order_id: orderId,
    trade,
    urgency: o?.urgency ?? fallback.urgency,
    label: o ? `${titleCase(o.trade)} · ${o.location.city ?? o.location.state}` : fallback.label,
    durationMs: Math.round(hours * 60) * MIN_MS,
    window,
    from: null,
  };
}

const queuedJob = (o: Order): DragJob =>
  dragJobOf(o.order_id, {
    trade: o.trade,
    urgency: o.urgency,
    label: `${titleCase(o.trade)} · ${place(o.location)}`,
  });

function jobOfBlock(lane: Lane, j: LaneJob): DragJob {
  const start = Date.parse(j.start);
  return {
    ...dragJobOf(j.order_id, {
      trade: j.trade,
      urgency: j.urgency,
      label: `${titleCase(j.trade)} · ${j.city ?? j.state}`,
    }),
    durationMs: Math.max(SNAP_MS, Date.parse(j.end) - start),
    from: { contractor_id: lane.contractor_id, start },
  };
}

/** "10:00 AM PST" on the lane's clock. */
const laneClock = (lane: Lane, t: number) =>
  `${clockIn(new Date(t).toISOString(), lane.time_zone)} ${zoneShort(lane.time_zone, lane.day.start)}`;

function describeOver(job: DragJob, lane: Lane, start: number, fit: LaneFit): string {
  return `${job.label} over ${lane.name} at ${laneClock(lane, start)}. ${fit.ok ? "It fits." : fit.text}`;
}

/** Where a point of the page falls: the lane under it and the start there. */
function overAt(x: number, y: number, job: DragJob, grabMs: number) {
  const laneEl = document.elementFromPoint(x, y)?.closest<HTMLElement>(".lanes .lane[data-contractor-id]");
  const id = laneEl?.dataset.contractorId;
  const lane = id ? shownLanes.get(id) : undefined;
  const track = laneEl?.querySelector<HTMLElement>(".lane-track");
  if (!lane || !track) return null;
  const rect = track.getBoundingClientRect();
  const start = instantAt(lane.day, (x - rect.left) / rect.width, grabMs);
  dragStatus.value = describeOver(job, lane, start, fitAt(lane, job, start));
  return { contractorId: lane.contractor_id, start };
}

/** The drag ends: the place under the pointer goes at once, the lanes' dimming on the next frame (every
 * lane redraws for it: after the drop's own block is on screen). */
function endDrag() {
  const ended = dragging.peek();
  dragOver.value = null;
  requestAnimationFrame(() => {
    if (dragging.peek() === ended) dragging.value = null;
  });
}

/** Sends a drop through the public operations: drawn at once, refused or confirmed on its lane. */
async function drop(job: DragJob, over: { contractorId: string; start: number }) {
  const lane = shownLanes.get(over.contractorId);
  if (!lane) return;
  const plan = planDrop(job, over.contractorId, over.start, dropContext.reason);
  if ("refused" in plan) {
    noteLane(lane.contractor_id, job.order_id, plan.refused, true);
    return;
  }
  if (plan.steps.length === 0) return;
  const entry = {
    contractorId: lane.contractor_id,
    start: over.start,
    end: over.start + job.durationMs,
    label: job.label,
    settled: false,
  };
  setPending(job.order_id, entry);
  let done = 0;
  try {
    for (const step of plan.steps) {
      await post(step.path, step.body);
      done++;
    }
    setPending(job.order_id, { ...entry, settled: true });
    const verb =
      job.from === null ? "Assigned" : job.from.contractor_id === lane.contractor_id ? "Moved" : "Reassigned";
    noteLane(
      lane.contractor_id,
      job.order_id,
      `${verb} ${job.label} to ${lane.name} at ${laneClock(lane, over.start)}.`,
      false,
    );
  } catch (err) {
    setPending(job.order_id, null);
    // The server names contractors by id: on the lane, by name.
    const why = (err instanceof ApiProblem ? err.message : "The service did not answer.")
      .split(`Contractor ${lane.contractor_id}`)
      .join(lane.name)
      .split(lane.contractor_id)
      .join(lane.name);
    noteLane(
      lane.contractor_id,
      job.order_id,
      `${job.label} not ${job.from === null ? "assigned" : "moved"}: ${why}${done > 0 ? " (its window was moved first: it stays moved)" : ""}`,
      true,
    );
  } finally {
    dropContext.reload();
  }
}

/** A pointer pressed on a block or a queued order: a drag once it moves a few pixels (a click otherwise). */
function pointerDrag(e: PointerEvent, job: DragJob) {
  if (e.button !== 0 || dragging.value) return;
  const x0 = e.clientX;
  const y0 = e.clientY;
  // Where on the block it was taken: the block keeps that point under the pointer.
  let grabMs = 0;
  if (job.from) {
    const lane = shownLanes.get(job.from.contractor_id);
    const track = (e.currentTarget as HTMLElement).closest<HTMLElement>(".lane-track");
    if (lane && track) {
      const rect = track.getBoundingClientRect();
      const day0 = Date.parse(lane.day.start);
      const at = day0 + ((e.clientX - rect.left) / rect.width) * (Date.parse(lane.day.end) - day0);
      grabMs = Math.max(0, at - job.from.start);
    }
  }
  let started = false;
  const move = (ev: PointerEvent) => {
    if (!started) {
      if (Math.hypot(ev.clientX - x0, ev.clientY - y0) < 5) return;
      started = true;
      dragging.value = { job, mode: "pointer" };
    }
    ev.preventDefault();
    dragOver.value = overAt(ev.clientX, ev.clientY, job, grabMs);
  };
  const stop = () => {
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", up);
    window.removeEventListener("keydown", cancel, true);
  };
  const up = (ev: PointerEvent) => {
    stop();
    if (!started) return;
    // The click the release makes is the drop's, not an "open the order".
    const swallow = (c: Event) => {
      c.stopPropagation();
      c.preventDefault();
    };
    window.addEventListener("click", swallow, { capture: true, once: true });
    setTimeout(() => window.removeEventListener("click", swallow, true), 0);
    const over = overAt(ev.clientX, ev.clientY, job, grabMs);
    if (over) void drop(job, over);
    else dragStatus.value = "Dropped outside the lanes: nothing changed.";
    endDrag();
  };
  const cancel = (ev: KeyboardEvent) => {
    if (ev.key !== "Escape") return;
    stop();
    endDrag();
    dragStatus.value = "Drag cancelled: nothing changed.";
  };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", up);
  window.addEventListener("keydown", cancel, true);
}

/** The keyboard's drag: picked up where the job is (or on the first lane that takes it, at its window's
 * start or the next quarter hour), ← → a quarter hour (Shift: an hour), ↑ ↓ a lane, Enter drops, Escape
 * cancels. */
function keyboardDrag(job: DragJob) {
  if (dragging.value) return;
  const lanes = [...shownLanes.values()];
  if (lanes.length === 0) return;
  let lane =
    (job.from && shownLanes.get(job.from.contractor_id)) ||
    lanes.find((l) => laneTakes(l, job).ok) ||
    lanes[0];
  if (!lane) return;
  const first =
    job.from?.start ?? Math.max(job.window?.start ?? 0, Math.ceil(Date.now() / SNAP_MS) * SNAP_MS);
  let start = nudge(lane.day, first, 0);
  dragging.value = { job, mode: "keyboard" };
  const show = () => {
    if (!lane) return;
    dragOver.value = { contractorId: lane.contractor_id, start };
    dragStatus.value = `${describeOver(job, lane, start, fitAt(lane, job, start))} Arrows move it, Enter drops, Escape cancels.`;
  };
  show();
  const key = (ev: KeyboardEvent) => {
    if (!lane) return;
    const step = ev.shiftKey ? 4 : 1;
    if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
      start = nudge(lane.day, start, ev.key === "ArrowLeft" ? -step : step);
    } else if (ev.key === "ArrowUp" || ev.key === "ArrowDown") {
      const list = [...shownLanes.values()];
      const i = list.findIndex((l) => l.contractor_id === lane?.contractor_id);
      const next = list[Math.min(list.length - 1, Math.max(0, i + (ev.key === "ArrowUp" ? -1 : 1)))];
      if (next) {
        // The same instant on the next lane (its day may be drawn in another zone).
        start = nudge(next.day, start, 0);
        lane = next;
      }
    } else if (ev.key === "Enter" || ev.key === "Escape") {
      window.removeEventListener("keydown", key, true);
      window.removeEventListener("keyup", swallowKey, true);
      const over = dragOver.value;
      if (ev.key === "Enter" && over) void drop(job, over);
      else dragStatus.value = "Drag cancelled: nothing changed.";
      endDrag();
      ev.preventDefault();
      ev.stopPropagation();
      return;
    } else if (ev.key !== " ") {
      return;
    }
    ev.preventDefault();
    ev.stopPropagation();
    show();
  };
  // Space and Enter act on their key-up too (a button's click): the drag has them.
  const swallowKey = (ev: KeyboardEvent) => {
    if (ev.key === " " || ev.key === "Enter") {
      ev.preventDefault();
      ev.stopPropagation();
    }
  };
  window.addEventListener("keydown", key, true);
  window.addEventListener("keyup", swallowKey, true);
}

interface Filters {
  date: string;
  state: string;
  trade: string;
  name: string;
  sort: "name" | "load";
  zone: string;
}

/** The lanes read again, with each lane that did not change kept as the object it was: its row (memo) is
 * not drawn again, so a change redraws the lanes it touched, not all 200. */
function keepUnchanged(prev: LanePage | null, next: LanePage): LanePage {
  if (!prev) return next;
  const before = new Map(prev.lanes.map((l) => [l.contractor_id, l]));
  return {
    ...next,
    lanes: next.lanes.map((l) => {
      const old = before.get(l.contractor_id);
      return old && JSON.stringify(old) === JSON.stringify(l) ? old : l;
    }),
  };
}

/** The stream's events that change lanes. */
const LANE_EVENTS = [...ORDER_EVENT_TYPES, CONTRACTOR_CHANGED_EVENT];

/** The lanes for the filters, a page at a time (or every page: "Show all lanes"); read again (debounced)
 * when an order or a contractor changes, as many lanes as are shown. */
function useLanes(f: Filters) {
  const [page, setPage] = useState<LanePage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const shown = useRef(LANES_PAGE);
  /** The filters of the last read: a read for new filters waits for the typing to pause; one for a
   * change (the event stream, a drop) goes at once. */
  const lastRead = useRef<string | null>(null);
  const query = (limit: number, cursor?: string) =>
    get<LanePage>("/api/dispatcher/v1/schedule/lanes", {
      date: f.date,
      state: f.state.trim().toUpperCase() || undefined,
      trade: f.trade || undefined,
      name: f.name.trim() || undefined,
      sort: f.sort,
      time_zone: f.zone || undefined,
      limit,
      cursor,
    });
  /** `count` lanes (all of them: Infinity) from `from` on, in pages of up to the API's limit. */
  const read = async (count: number, from?: LanePage): Promise<LanePage> => {
    let at = from;
    while (!at || (at.next_cursor && at.lanes.length < count)) {
      const want = Math.min(LANES_MAX, count - (at?.lanes.length ?? 0));
      const next = await query(want, at?.next_cursor ?? undefined);
      at = { ...next, lanes: [...(at?.lanes ?? []), ...next.lanes] };
    }
    return at;
  };
  useEffect(() => {
    shown.current = LANES_PAGE;
  }, [f.date, f.state, f.trade, f.name, f.sort, f.zone]);
  useEffect(() => {
    let stale = false;
    const filters = JSON.stringify([f.date, f.state, f.trade, f.name, f.sort, f.zone]);
    const typed = lastRead.current !== null && lastRead.current !== filters;
    lastRead.current = filters;
    const timer = setTimeout(
      async () => {
        try {
          // A live refresh reads as many lanes as are shown.
          const next = await read(shown.current);
          if (!stale) {
            setPage((prev) => keepUnchanged(prev, next));
            setError(null);
          }
        } catch (err) {
          if (!stale) setError(err instanceof ApiProblem ? err.message : "The schedule could not be loaded.");
        }
      },
      typed ? 200 : 0,
    );
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [f.date, f.state, f.trade, f.name, f.sort, f.zone, version]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // An order's change moves its blocks; a contractor's (time off, standing, a pool import) its lane.
    const stop = subscribe(() => {
      clearTimeout(timer);
      // A burst of changes (an optimiser's apply) is read once.
      timer = setTimeout(() => setVersion((v) => v + 1), 100);
    }, LANE_EVENTS);
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, []);
  /** `count` more lanes (Infinity: every one left). */
  const more = async (count: number) => {
    if (!page?.next_cursor) return;
    try {
      const next = await read(page.lanes.length + count, page);
      shown.current = next.lanes.length;
      setPage(next);
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The schedule could not be loaded.");
    }
  };
  return { page, error, more, reload: () => setVersion((v) => v + 1) };
}

export function Schedule({ onOpenOrder }: { onOpenOrder: (orderId: string) => void }) {
  const today = localDate(minute.value);
  const [f, setF] = useState<Filters>({
    date: today,
    state: "",
    trade: "",
    name: "",
    sort: "name",
    zone: "",
  });
  const set = (patch: Partial<Filters>) => setF({ ...f, ...patch });
  const { page, error, more, reload } = useLanes(f);
  // One function for every lane's "open the order" (the lanes' rows are memoised on their props).
  const opener = useRef(onOpenOrder);
  opener.current = onOpenOrder;
  const openOrder = useCallback((id: string) => opener.current(id), []);
  const [proposal, setProposal] = useState<Proposal | null>(null);
  const [reason, setReason] = useState("Placed on the schedule board");
  const lanes = page?.lanes ?? [];
  shownLanes = new Map(lanes.map((l) => [l.contractor_id, l]));
  dropContext.reason = reason;
  dropContext.reload = reload;
  // A read of the lanes shows the drops the server took: their optimistic blocks go.
  useEffect(() => {
    if (![...pending.value.values()].some((p) => p.settled)) return;
    pending.value = new Map([...pending.value].filter(([, p]) => !p.settled));
  }, [page]);
  const names = new Map(lanes.map((l) => [l.contractor_id, { name: l.name, zone: l.time_zone }]));
  const zoneNote = f.zone
    ? `Times in ${f.zone} (${zoneShort(f.zone, `${f.date}T12:00:00Z`)}) for every lane.`
    : "Times in each contractor's own zone, named on its lane.";
  return (
    <section class="schedule" aria-labelledby="schedule-title">
      <div class="board-head">
        <h1 id="schedule-title">Schedule</h1>
        <nav class="tabs day-tabs" aria-label="Day">
          {[0, 1, 2, 3].map((n) => {
            const d = addDays(today, n);
            return (
              <button
                key={d}
                type="button"
                class={`tab ${f.date === d ? "tab-on" : ""}`}
                aria-pressed={f.date === d}
                onClick={() => set({ date: d })}
              >
                {n === 0 ? "Today" : n === 1 ? "Tomorrow" : dayName(d)}
              </button>
            );
          })}
        </nav>
      </div>
      <ScheduleFilters f={f} set={set} />
      <p class="zone-note muted" data-zone={f.zone || "own"}>
        {dayName(f.date)} · {zoneNote}{" "}
        <span class="planned-key">Striped blocks are planned maintenance.</span>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="schedule-body">
        <div class="lanes-area">
          <div class="drop-bar">
            <label class="drop-reason">
              Reason for changes made here
              <input
                class="drop-reason-input"
                value={reason}
                maxLength={1000}
                onInput={(e) => setReason((e.target as HTMLInputElement).value)}
              />
            </label>
            <p class="hint" id="drag-help">
              Drag a queued order onto a lane to assign it at that time; drag a block along its lane to
              reschedule it, onto another lane to reassign it. Keyboard: Space on a block (or a queued order's
              Move) picks it up, ← → move it 15 min (Shift: an hour), ↑ ↓ change lane, Enter drops, Escape
              cancels.
            </p>
            <p class="sr-only drag-status" role="status" aria-live="polite">
              {dragStatus.value}
            </p>
          </div>
          <Optimiser
            date={f.date}
            state={f.state.trim().toUpperCase()}
            proposal={proposal}
            onProposal={setProposal}
            onApplied={reload}
            names={names}
          />
          {page === null ? (
            <p class="muted">Loading the schedule…</p>
          ) : lanes.length === 0 ? (
            <p class="empty">No contractor matches.</p>
          ) : (
            <>
              <Axis />
              <ul class="lanes" aria-label="Contractor lanes">
                {lanes.map((l) => (
                  <LaneRow key={l.contractor_id} lane={l} proposal={proposal} onOpenOrder={openOrder} />
                ))}
              </ul>
              <p class="muted lanes-count" data-total={page.total}>
                Showing {lanes.length} of {page.total} contractors.
              </p>
              {page.next_cursor && (
                <>
                  <button type="button" class="btn btn-quiet more" onClick={() => void more(LANES_PAGE)}>
                    Show more lanes
                  </button>{" "}
                  <button type="button" class="btn btn-quiet more-all" onClick={() => void more(Infinity)}>
                    Show all lanes
                  </button>
                </>
              )}
            </>
          )}
        </div>
        <Queue onOpenOrder={onOpenOrder} />
      </div>
    </section>
  );
}

/** The lanes' filters: name, date, state, trade, sort and the zone they are drawn in. */
function ScheduleFilters({ f, set }: { f: Filters; set: (patch: Partial<Filters>) => void }) {
  return (
    <search class="filters filters-schedule">
      <input
        type="search"
        class="filter-text"
        aria-label="Find contractors by name"
        placeholder="Find a contractor by name…"
        value={f.name}
        onInput={(e) => set({ name: (e.target as HTMLInputElement).value })}
      />
      <input
        type="date"
        aria-label="Date"
        value={f.date}
        onChange={(e) => {
          const v = (e.target as HTMLInputElement).value;
          if (v) set({ date: v });
        }}
      />
      <input
        aria-label="State (two letters)"
        placeholder="State, e.g. CA"
        maxLength={2}
        value={f.state}
        onInput={(e) => set({ state: (e.target as HTMLInputElement).value })}
      />
      <select
        aria-label="Trade"
        value={f.trade}
        onChange={(e) => set({ trade: (e.target as HTMLSelectElement).value })}
      >
        <option value="">All trades</option>
        {TRADE_CODES.map((t) => (
          <option key={t} value={t}>
            {titleCase(t)}
          </option>
        ))}
      </select>
      <select
        aria-label="Sort lanes"
        value={f.sort}
        onChange={(e) => set({ sort: (e.target as HTMLSelectElement).value as Filters["sort"] })}
      >
        <option value="name">By name</option>
        <option value="load">By load</option>
      </select>
      <select
        aria-label="Time zone"
        value={f.zone}
        onChange={(e) => set({ zone: (e.target as HTMLSelectElement).value })}
      >
        <option value="">Each lane's own zone</option>
        {ZONES.map((z) => (
          <option key={z} value={z}>
            {z.replace(/^.*\//, "").replace(/_/g, " ")}
          </option>
        ))}
      </select>
    </search>
  );
}

/** The hours of the day over the lanes. */
function Axis() {
  return (
    <div class="lane lane-axis" aria-hidden="true">
      <span class="lane-head" />
      <span class="lane-track axis-track">
        {HOURS.map((h) => (
          <span key={h} class="axis-tick" style={{ left: `${(h / 24) * 100}%` }}>
            {h === 0 || h === 24 ? "12 AM" : h === 12 ? "12 PM" : h < 12 ? `${h} AM` : `${h - 12} PM`}
          </span>
        ))}
      </span>
    </div>
  );
}

/**
 * What a lane shows of the drag, the drops on their way and the notes. A drag, a drop and a note redraw
 * only the lanes they touch: the row follows a signature of what it shows of them (a string, equal while
 * nothing it shows changed) and reads them unsubscribed.
 */
function useLaneDrag(lane: Lane) {
  useComputed(() => {
    const d = dragging.value;
    return d ? `${laneTakes(lane, d.job).ok}|${d.job.order_id}` : "";
  }).value;
  useComputed(() => {
    const ids = new Set(lane.jobs.map((j) => j.order_id));
    let signature = "";
    for (const [id, p] of pending.value) {
      if (ids.has(id) || p.contractorId === lane.contractor_id)
        signature += `${id}:${p.contractorId}:${p.settled};`;
    }
    return signature;
  }).value;
  const note = useComputed(() => laneNotes.value.get(lane.contractor_id)).value;
  const drag = dragging.peek();
  const takes = drag ? laneTakes(lane, drag.job) : null;
  const moving = pending.peek();
  const mine = [...moving].filter(([, p]) => p.contractorId === lane.contractor_id);
  return { drag, takes, moving, mine, note };
}

interface LaneRowProps {
  lane: Lane;
  proposal: Proposal | null;
  onOpenOrder: (id: string) => void;
}

/** A lane's row, drawn again only when its lane, the proposal or the opener changed (a read of the lanes
 * keeps the unchanged lanes' objects): preact/compat's memo would do it, but compat changes every input's
 * onChange into onInput, which the rest of the console relies on not happening. */
class LaneRow extends Component<LaneRowProps> {
  override shouldComponentUpdate(next: LaneRowProps): boolean {
    const p = this.props;
    return next.lane !== p.lane || next.proposal !== p.proposal || next.onOpenOrder !== p.onOpenOrder;
  }

  override render() {
    return <LaneRowView {...this.props} />;
  }
}

function LaneRowView(props: LaneRowProps) {
  const { lane } = props;
  const nowAt = minute.value;
  const day = lane.day;
  const nowIn = nowAt >= Date.parse(day.start) && nowAt < Date.parse(day.end);
  const zone = zoneShort(lane.time_zone, day.start);
  const proposed = (props.proposal?.routes ?? [])
    .filter((r) => r.contractor_id === lane.contractor_id)
    .flatMap((r) => r.stops.filter((s) => s.change !== "kept"));
  const { drag, takes, moving, mine, note } = useLaneDrag(lane);
  return (
    <li
      class={`lane ${takes && !takes.ok ? "lane-dim" : ""} ${drag && takes?.ok ? "lane-drop" : ""}`}
      data-contractor-id={lane.contractor_id}
      data-time-zone={lane.time_zone}
      data-drop={takes ? (takes.ok ? "yes" : takes.why) : undefined}
      title={takes && !takes.ok ? takes.text : undefined}
    >
      <span class="lane-head">
        <span class="lane-name">{lane.name}</span>
        <span class="lane-meta">
          {zone} · {lane.jobs.length} {lane.jobs.length === 1 ? "job" : "jobs"}
          {lane.held_minutes > 0 && ` · ${duration(lane.held_minutes)}`}
        </span>
      </span>
      <span class="lane-track" data-day-start={day.start} data-day-end={day.end}>
        {lane.working.map((w) => (
          <span key={w.start} class="lane-work" style={spanStyle(day, w)} title="Working hours" />
        ))}
        {lane.time_off.map((o) => (
          <span key={o.start} class="lane-off" style={spanStyle(day, o)} title="Time off" />
        ))}
        {lane.jobs
          .filter((j) => !moving.has(j.order_id))
          .map((j) => (
            <Fragment key={j.order_id}>
              {j.travel_minutes > 0 && <Drive lane={lane} job={j} />}
              <button
                type="button"
                class={`block st-${j.status} ${j.service_level === "at_risk" || j.service_level === "breached" ? `block-${j.service_level}` : ""} ${j.planned ? "block-planned" : ""} ${DRAGGABLE.has(j.status) ? "block-move" : ""} ${drag?.job.order_id === j.order_id ? "block-lifted" : ""}`}
                style={spanStyle(day, j)}
                data-order-id={j.order_id}
                data-status={j.status}
                data-start={j.start}
                data-end={j.end}
                data-travel-start={j.travel_start}
                data-service-level={j.service_level ?? undefined}
                data-planned={j.planned ? "true" : undefined}
                aria-label={`${j.planned ? "Planned " : ""}${titleCase(j.trade)}, ${j.city ?? j.state}: ${clockIn(j.start, lane.time_zone)} to ${clockIn(j.end, lane.time_zone)} ${zone}, ${STATUS_LABEL[j.status]}${j.service_level === "at_risk" || j.service_level === "breached" ? `, ${STANDING_LABEL[j.service_level]}` : ""}. Open the order.`}
                title={`${j.planned ? "Planned maintenance · " : ""}${titleCase(j.trade)} · ${j.city ?? j.state}${j.account_name ? ` · ${j.account_name}` : ""}\n${clockIn(j.start, lane.time_zone)}–${clockIn(j.end, lane.time_zone)} ${zone} · ${STATUS_LABEL[j.status]}`}
                aria-describedby={DRAGGABLE.has(j.status) ? "drag-help" : undefined}
                onClick={() => props.onOpenOrder(j.order_id)}
                onPointerDown={(e) => DRAGGABLE.has(j.status) && pointerDrag(e, jobOfBlock(lane, j))}
                onKeyDown={(e) => {
                  if (e.key !== " " || !DRAGGABLE.has(j.status)) return;
                  e.preventDefault();
                  keyboardDrag(jobOfBlock(lane, j));
                }}
              >
                <span class="block-text">
                  {(j.service_level === "at_risk" || j.service_level === "breached") && (
                    <span class="block-flag" aria-hidden="true">
                      !
                    </span>
                  )}
                  {j.planned && <span class="block-planned-mark">Planned</span>}
                  {j.planned && " "}
                  {titleCase(j.trade)} · {j.city ?? j.state}
                </span>
              </button>
            </Fragment>
          ))}
        {mine.map(([orderId, p]) => (
          <span
            key={`m-${orderId}`}
            class={p.settled ? "block block-settled" : "block block-pending"}
            data-settled={p.settled ? "true" : undefined}
            style={spanStyle(day, {
              start: new Date(p.start).toISOString(),
              end: new Date(p.end).toISOString(),
            })}
            data-pending-order-id={orderId}
            title={`${p.label}: ${laneClock(lane, p.start)}${p.settled ? "" : ", sending…"}`}
          >
            <span class="block-text">{p.label}</span>
          </span>
        ))}
        <DropGhost lane={lane} />
        {proposed.map((s) => (
          <span
            key={`p-${s.order_id}`}
            class="block block-proposed"
            style={spanStyle(day, { start: s.start_at, end: s.end_at })}
            data-proposed-order-id={s.order_id}
            title={`Proposed: ${s.order_id} ${clockIn(s.start_at, lane.time_zone)}–${clockIn(s.end_at, lane.time_zone)} ${zone} (${s.change})`}
          >
            <span class="block-text">{s.change === "moved" ? "Moved here" : "New"}</span>
          </span>
        ))}
        {nowIn && <span class="now-line" style={{ left: `${at(day, nowAt)}%` }} title="Now" />}
      </span>
      {note && (
        <p
          class={`lane-note ${note.refused ? "lane-refused" : "lane-done"}`}
          role={note.refused ? "alert" : "status"}
          data-order-id={note.orderId}
        >
          {note.text}
        </p>
      )}
    </li>
  );
}

/** The drive before a held job, drawn as a lighter lead-in from when it starts to the job's start. */
function Drive({ lane, job }: { lane: Lane; job: LaneJob }) {
  const from = job.travel_from_order_id === null ? "from base" : "from the job before";
  const text = `Drive ${duration(job.travel_minutes)} ${from}, from ${clockIn(job.travel_start, lane.time_zone)}`;
  return (
    <span
      class="lane-travel"
      style={spanStyle(lane.day, { start: job.travel_start, end: job.start })}
      data-travel-order-id={job.order_id}
      role="img"
      aria-label={text}
      title={text}
    />
  );
}

/** Where the dragged job would land on this lane, and what the console can tell of it there. */
function DropGhost({ lane }: { lane: Lane }) {
  // Only the lane under the pointer redraws as it moves.
  const start = useComputed(() => {
    const over = dragOver.value;
    return over && over.contractorId === lane.contractor_id ? over.start : null;
  }).value;
  const drag = dragging.peek();
  if (!drag || start === null) return null;
  const over = { start };
  const fit = fitAt(lane, drag.job, over.start);
  const span = {
    start: new Date(over.start).toISOString(),
    end: new Date(over.start + drag.job.durationMs).toISOString(),
  };
  return (
    <span
      class={`block block-ghost ${fit.ok ? "" : "ghost-bad"}`}
      style={spanStyle(lane.day, span)}
      data-ghost-fit={fit.ok ? "ok" : fit.why}
      data-start={span.start}
      aria-hidden="true"
    >
      <span class="block-text">
        {laneClock(lane, over.start)}
        {fit.ok ? "" : ` · ${fit.text}`}
      </span>
    </span>
  );
}

/** Orders nobody holds, most urgent and nearest deadline first; each opens on the board. */
function Queue({ onOpenOrder }: { onOpenOrder: (id: string) => void }) {
  const list = queue.value;
  const nowAt = minute.value;
  const placing = pending.value;
  return (
    <aside class="queue card" aria-labelledby="queue-title">
      <h2 id="queue-title">
        Queue <span class="count">{list.length}</span>
      </h2>
      <p class="hint">Needs a dispatcher: most urgent, then nearest deadline.</p>
      {list.length === 0 ? (
        <p class="muted">Nothing waiting.</p>
      ) : (
        <ol class="queue-rows">
          {list.slice(0, 200).map((o) => {
            const deadline = deadlineOf(o);
            const window = o.arrival_window;
            const flag = slaFlag(o, nowAt);
            return (
              <li
                key={o.order_id}
                class={`queue-row ${placing.has(o.order_id) ? "queue-placing" : ""}`}
                data-order-id={o.order_id}
              >
                <button
                  type="button"
                  class="queue-move"
                  aria-label={`Move ${titleCase(o.trade)} · ${place(o.location)} onto the schedule`}
                  aria-describedby="drag-help"
                  title="Drag onto a lane, or press to move it with the arrow keys"
                  onPointerDown={(e) => pointerDrag(e, queuedJob(o))}
                  onClick={() => keyboardDrag(queuedJob(o))}
                >
                  ⠿
                </button>
                <button
                  type="button"
                  class="queue-open"
                  onClick={() => onOpenOrder(o.order_id)}
                  onPointerDown={(e) => pointerDrag(e, queuedJob(o))}
                >
                  <span class="queue-line">
                    <StatusPill status={o.status} />
                    {o.urgency !== "routine" && <span class={`urgency u-${o.urgency}`}>{o.urgency}</span>}
                    {isPlannedReference(o.reference_id) && <PlannedBadge />}
                    {flag && <span class={`sla sla-${flag}`}>{STANDING_LABEL[flag]}</span>}
                  </span>
                  <span class="queue-title">
                    {titleCase(o.trade)} · {place(o.location)}
                  </span>
                  {o.account_name && <span class="queue-who">{o.account_name}</span>}
                  {window && (
                    <span class="queue-window" data-window-start={window.start} data-window-end={window.end}>
                      Window {zonedSpan(window.start, window.end, o.time_zone)}
                      {relative(window.start, nowAt) && ` (${relative(window.start, nowAt)})`}
                    </span>
                  )}
                  {deadline && deadline !== window?.start && (
                    <span class="queue-deadline">
                      {o.respond_by ? "Respond by" : o.arrive_by ? "Arrive by" : "Offer ends"}{" "}
                      {zoned(deadline, o.time_zone)}
                      {relative(deadline, nowAt) && ` (${relative(deadline, nowAt)})`}
                    </span>
                  )}
                </button>
              </li>
            );
          })}
        </ol>
      )}
    </aside>
  );
}

/** An order as the board knows it: "HVAC · San Francisco" with its id, else its id. */
/** What an apply did: the jobs assigned (a status), and apart, as an alert, each job the server refused
 * with its contractor's name and the server's reason (the job stays in the queue). */
function AppliedNotice({
  applied,
  names,
}: {
  applied: Applied;
  names: ReadonlyMap<string, { name: string; zone: string }>;
}) {
  const assigned = applied.assignments.filter((a) => a.outcome === "assigned").length;
  const refused = applied.assignments.filter((a) => a.outcome === "refused");
  return (
    <div class="applied">
      <div class="notice" role="status">
        Applied: {assigned} assigned{refused.length > 0 ? `, ${refused.length} refused` : ""}
      </div>
      {refused.length > 0 && (
        <div class="error applied-refused" role="alert">
          {refused.length === 1 ? "Not assigned" : `${refused.length} jobs not assigned`} (still in the
          queue):
          <ul>
            {refused.map((a) => (
              <li key={a.order_id} data-order-id={a.order_id} class="refused">
                <OrderLabel id={a.order_id} /> to {names.get(a.contractor_id)?.name ?? a.contractor_id}{" "}
                refused: {a.reason}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function OrderLabel({ id }: { id: string }) {
  const o = boardOrders.value.get(id);
  return o ? (
    <span title={id}>
      {titleCase(o.trade)} · {o.location.city ?? o.location.state}
      {o.account_name ? ` (${o.account_name})` : ""}
    </span>
  ) : (
    <code>{id}</code>
  );
}

/** Why the optimiser left a job out, in words (dispatch.schedule_optimize's reasons). */
const UNPLACED: Record<string, string> = {
  no_contractor: "no contractor of its trade covers its place",
  contractor_unavailable:
    "the contractor holding it cannot be routed that day (not working, time off, or a lapsed check): it stays as it is",
  no_feasible_slot: "no route reaches it in its time",
  no_location: "its place could not be found on the map",
  time_limit: "not reached before the time limit: optimise again for one state",
};

/** "Optimise day": the proposal for the day (and the state, when one is chosen), drawn over the lanes,
 * with Apply and Discard; Apply's outcome per job. */
function Optimiser(props: {
  date: string;
  state: string;
  proposal: Proposal | null;
  onProposal: (p: Proposal | null) => void;
  onApplied: () => void;
  /** The visible lanes' names and zones, by contractor id. */
  names: ReadonlyMap<string, { name: string; zone: string }>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [applied, setApplied] = useState<Applied | null>(null);
  const { proposal } = props;
  useEffect(() => {
    props.onProposal(null);
    setApplied(null);
  }, [props.date, props.state]);
  const optimise = async () => {
    setBusy(true);
    setError(null);
    setApplied(null);
    try {
      props.onProposal(
        await post<Proposal>("/api/dispatcher/v1/schedule/optimize", {
          date: props.date,
          ...(props.state.length === 2 ? { state: props.state } : {}),
        }),
      );
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The optimiser did not answer.");
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    if (!proposal) return;
    setBusy(true);
    setError(null);
    try {
      setApplied(
        await post<Applied>("/api/dispatcher/v1/schedule/apply", { proposal_id: proposal.proposal_id }),
      );
      props.onProposal(null);
      props.onApplied();
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The proposal could not be applied.");
    } finally {
      setBusy(false);
    }
  };
  const who = (id: string) => props.names.get(id)?.name ?? id;
  /** A stop's start in its lane's zone (named), else the browser's. */
  const startOf = (m: Stop & { contractor_id: string }) => {
    const zone = props.names.get(m.contractor_id)?.zone;
    return zone
      ? `${clockIn(m.start_at, zone)} ${zoneShort(zone, m.start_at)}`
      : new Date(m.start_at).toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
  };
  const moves = (proposal?.routes ?? []).flatMap((r) =>
    r.stops.filter((s) => s.change !== "kept").map((s) => ({ ...s, contractor_id: r.contractor_id })),
  );
  return (
    <section class="optimiser" aria-label="Optimiser">
      <div class="optimiser-bar">
        <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void optimise()}>
          Optimise day
        </button>
        <span class="muted">
          Proposes routes for {dayName(props.date)}
          {props.state.length === 2 ? ` in ${props.state}` : " in every state"}: nothing changes until Apply.
        </span>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {proposal && (
        <div class="proposal card" data-proposal-id={proposal.proposal_id}>
          <p>
            <strong>Proposal:</strong> {proposal.totals.served} of {proposal.totals.jobs} jobs placed,{" "}
            {proposal.totals.changes} {proposal.totals.changes === 1 ? "change" : "changes"}, travel{" "}
            {duration(proposal.totals.travel_minutes)}
            {proposal.totals.unassigned > 0 && `, ${proposal.totals.unassigned} left unassigned`}.
          </p>
          {moves.length > 0 && (
            <ul class="proposal-moves">
              {moves.map((m) => (
                <li key={m.order_id} data-order-id={m.order_id} data-change={m.change}>
                  {m.change === "moved" ? "Move" : "Assign"} <OrderLabel id={m.order_id} /> to{" "}
                  {who(m.contractor_id)} at {startOf(m)}
                  {m.travel_minutes > 0 && ` (${duration(m.travel_minutes)} drive)`}
                </li>
              ))}
            </ul>
          )}
          {proposal.unassigned.length > 0 && (
            <ul class="proposal-unassigned">
              {proposal.unassigned.map((u) => (
                <li key={u.order_id} data-order-id={u.order_id}>
                  Not placed: <OrderLabel id={u.order_id} /> (
                  {UNPLACED[u.reason] ?? u.reason.replace(/_/g, " ")})
                </li>
              ))}
            </ul>
          )}
          <div class="proposal-buttons">
            <button
              type="button"
              class="btn btn-primary"
              disabled={busy || moves.length === 0}
              onClick={() => void apply()}
            >
              Apply
            </button>
            <button
              type="button"
              class="btn btn-quiet"
              disabled={busy}
              onClick={() => props.onProposal(null)}
            >
              Discard
            </button>
          </div>
        </div>
      )}
      {applied && <AppliedNotice applied={applied} names={props.names} />}
    </section>
  );
}
