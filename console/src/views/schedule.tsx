// The dispatch team's Schedule (issue 31): a lane per contractor over one day (dispatch.schedule_lanes),
// its working hours and time off shaded, each job it holds a block from its start to its end coloured by
// status and flagged at risk or breached, the current time as a line; beside the lanes, the queue of
// orders that need a dispatcher, most urgent and nearest deadline first (the board's orders, live); and
// the optimiser: "Optimise day" (dispatch.schedule_optimize) draws the proposal over the lanes, Apply
// (dispatch.schedule_apply) carries it out and lists each job's outcome.

import { computed } from "@preact/signals";
import { useEffect, useRef, useState } from "preact/hooks";
import { isPlannedReference } from "../../../src/domain/maintenance/plan";
import { URGENCIES } from "../../../src/domain/pricing";
import { TRADE_CODES } from "../../../src/domain/trades";
import { ApiProblem, get, post } from "../api";
import { duration, minute, place, relative, STATUS_LABEL, titleCase, zoned } from "../format";
import { subscribe } from "../live";
import type { Order, OrderStatus } from "../types";
import { boardOrders, slaFlag } from "./board";
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

interface Filters {
  date: string;
  state: string;
  trade: string;
  name: string;
  sort: "name" | "load";
  zone: string;
}

/** The lanes for the filters, a page at a time (or every page: "Show all lanes"); read again (debounced)
 * when an order changes, as many lanes as are shown. */
function useLanes(f: Filters) {
  const [page, setPage] = useState<LanePage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const shown = useRef(LANES_PAGE);
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
    const timer = setTimeout(
      async () => {
        try {
          // A live refresh reads as many lanes as are shown.
          const next = await read(shown.current);
          if (!stale) {
            setPage(next);
            setError(null);
          }
        } catch (err) {
          if (!stale) setError(err instanceof ApiProblem ? err.message : "The schedule could not be loaded.");
        }
        // The first read at once; later ones (filters typed, orders changed) after a pause.
      },
      page === null ? 0 : 200,
    );
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [f.date, f.state, f.trade, f.name, f.sort, f.zone, version]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = subscribe((event) => {
      if (!event.type.startsWith("order.")) return;
      clearTimeout(timer);
      timer = setTimeout(() => setVersion((v) => v + 1), 300);
    });
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
  const [proposal, setProposal] = useState<Proposal | null>(null);
  const lanes = page?.lanes ?? [];
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
                  <LaneRow key={l.contractor_id} lane={l} proposal={proposal} onOpenOrder={onOpenOrder} />
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

function LaneRow(props: { lane: Lane; proposal: Proposal | null; onOpenOrder: (id: string) => void }) {
  const { lane } = props;
  const nowAt = minute.value;
  const day = lane.day;
  const nowIn = nowAt >= Date.parse(day.start) && nowAt < Date.parse(day.end);
  const zone = zoneShort(lane.time_zone, day.start);
  const proposed = (props.proposal?.routes ?? [])
    .filter((r) => r.contractor_id === lane.contractor_id)
    .flatMap((r) => r.stops.filter((s) => s.change !== "kept"));
  return (
    <li class="lane" data-contractor-id={lane.contractor_id} data-time-zone={lane.time_zone}>
      <span class="lane-head">
        <span class="lane-name">{lane.name}</span>
        <span class="lane-meta">
          {zone} · {lane.jobs.length} {lane.jobs.length === 1 ? "job" : "jobs"}
          {lane.held_minutes > 0 && ` · ${duration(lane.held_minutes)}`}
        </span>
      </span>
      <span class="lane-track">
        {lane.working.map((w) => (
          <span key={w.start} class="lane-work" style={spanStyle(day, w)} title="Working hours" />
        ))}
        {lane.time_off.map((o) => (
          <span key={o.start} class="lane-off" style={spanStyle(day, o)} title="Time off" />
        ))}
        {lane.jobs.map((j) => (
          <button
            key={j.order_id}
            type="button"
            class={`block st-${j.status} ${j.service_level === "at_risk" || j.service_level === "breached" ? `block-${j.service_level}` : ""} ${j.planned ? "block-planned" : ""}`}
            style={spanStyle(day, j)}
            data-order-id={j.order_id}
            data-status={j.status}
            data-start={j.start}
            data-end={j.end}
            data-service-level={j.service_level ?? undefined}
            data-planned={j.planned ? "true" : undefined}
            aria-label={`${j.planned ? "Planned " : ""}${titleCase(j.trade)}, ${j.city ?? j.state}: ${clockIn(j.start, lane.time_zone)} to ${clockIn(j.end, lane.time_zone)} ${zone}, ${STATUS_LABEL[j.status]}${j.service_level === "at_risk" || j.service_level === "breached" ? `, ${STANDING_LABEL[j.service_level]}` : ""}. Open the order.`}
            title={`${j.planned ? "Planned maintenance · " : ""}${titleCase(j.trade)} · ${j.city ?? j.state}${j.account_name ? ` · ${j.account_name}` : ""}\n${clockIn(j.start, lane.time_zone)}–${clockIn(j.end, lane.time_zone)} ${zone} · ${STATUS_LABEL[j.status]}`}
            onClick={() => props.onOpenOrder(j.order_id)}
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
        ))}
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
    </li>
  );
}

/** Orders nobody holds, most urgent and nearest deadline first; each opens on the board. */
function Queue({ onOpenOrder }: { onOpenOrder: (id: string) => void }) {
  const list = queue.value;
  const nowAt = minute.value;
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
            const flag = slaFlag(o, nowAt);
            return (
              <li key={o.order_id} class="queue-row" data-order-id={o.order_id}>
                <button type="button" class="queue-open" onClick={() => onOpenOrder(o.order_id)}>
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
                  {deadline && (
                    <span class="queue-deadline">
                      {o.respond_by
                        ? "Respond by"
                        : o.arrive_by
                          ? "Arrive by"
                          : o.arrival_window
                            ? "Window"
                            : "Offer ends"}{" "}
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
                  Not placed: <OrderLabel id={u.order_id} /> ({u.reason.replace(/_/g, " ")})
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
      {applied && (
        <div class="notice applied" role="status">
          Applied: {applied.assignments.filter((a) => a.outcome === "assigned").length} assigned
          {applied.assignments.some((a) => a.outcome === "refused") && (
            <ul>
              {applied.assignments
                .filter((a) => a.outcome === "refused")
                .map((a) => (
                  <li key={a.order_id} data-order-id={a.order_id} class="refused">
                    <OrderLabel id={a.order_id} /> refused: {a.reason}
                  </li>
                ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
