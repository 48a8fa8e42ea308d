// The account's planned maintenance (issue 34): its compliance over 90 days (dispatch.maintenance_compliance),
// the calendar of occurrences (dispatch.occurrences): overdue first, then the others by week, each with its
// window in the site's local time, its status and its order; Skip and Move with a required reason
// (dispatch.occurrence_skip, dispatch.occurrence_move); and the list of plans (dispatch.plans), each with its
// rule in words and its next occurrence.

import { computed, signal } from "@preact/signals";
import { useEffect, useRef, useState } from "preact/hooks";
import { isPlannedReference } from "../../../src/domain/maintenance/plan";
import { ApiProblem, allPages, get, post } from "../api";
import { titleCase } from "../format";
import { accountOrders } from "./account";
import type { Site } from "./sites";

type OccurrenceStatus =
  | "upcoming"
  | "generated"
  | "completed"
  | "completed_late"
  | "overdue"
  | "skipped"
  | "failed";

interface Occurrence {
  plan_id: string;
  occurrence_key: string;
  site_id: string;
  asset_id: string | null;
  plan_name: string;
  trade: string;
  status: OccurrenceStatus;
  window: { start: string; end: string };
  moved_from: { start: string; end: string } | null;
  order_id: string | null;
  order_status: string | null;
  reason: string | null;
}

interface Plan {
  plan_id: string;
  site_id: string;
  trade: string;
  name: string;
  recurrence: string;
  starts_on: string;
  window: { days: string[]; start: string; end: string };
  time_zone: string;
  status: "active" | "archived";
}

interface Figures {
  occurrences_due: number;
  completed_in_window: number;
  completed_late: number;
  not_done: number;
  compliance_rate: { value: number | null; sample_size: number };
}

interface Compliance {
  planned_maintenance: Figures;
  by_site: Array<{ site_id: string; site_name: string | null; planned_maintenance: Figures }>;
}

const STATUS_TEXT: Record<OccurrenceStatus, string> = {
  upcoming: "Upcoming",
  generated: "Generated",
  completed: "Completed",
  completed_late: "Completed late",
  overdue: "Overdue",
  skipped: "Skipped",
  failed: "Failed",
};

/** Occurrences an account may still skip or move. */
const ACTIONABLE = new Set<OccurrenceStatus>(["upcoming", "generated", "overdue", "failed"]);

const DAY_MS = 86_400_000;

const occurrences = signal<Occurrence[]>([]);
const plans = signal<Plan[]>([]);
const sites = signal<Map<string, Site>>(new Map());
const compliance = signal<Compliance | null>(null);
const loading = signal(true);
const loadError = signal<string | null>(null);

async function loadOccurrences() {
  const at = Date.now();
  const { occurrences: list } = await get<{ occurrences: Occurrence[] }>("/api/dispatch/v1/occurrences", {
    from: new Date(at - 7 * DAY_MS).toISOString(),
    until: new Date(at + 92 * DAY_MS).toISOString(),
    limit: 200,
  });
  occurrences.value = list;
}

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    const [siteList, planList, figures] = await Promise.all([
      allPages<Site, "sites">("/api/dispatch/v1/sites", "sites", { limit: 100, include_archived: "true" }),
      allPages<Plan, "plans">("/api/dispatch/v1/plans", "plans", { limit: 100 }),
      get<Compliance>("/api/dispatch/v1/maintenance/compliance", { period: "rolling_90d" }),
      loadOccurrences(),
    ]);
    sites.value = new Map(siteList.map((s) => [s.site_id, s]));
    plans.value = planList;
    compliance.value = figures;
  } catch (err) {
    loadError.value = err instanceof ApiProblem ? err.message : "Your plans could not be loaded.";
  } finally {
    loading.value = false;
  }
}

/** The short name of `zone` at `iso` ("CST", "CDT"). */
function zoneShort(zone: string, iso: string): string {
  const part = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "short" })
    .formatToParts(new Date(iso))
    .find((p) => p.type === "timeZoneName");
  return part?.value ?? zone;
}

/** A window in the site's zone, the zone named: "Tue, Dec 8, 7:00 AM – 11:00 AM CST". */
function windowIn(w: { start: string; end: string }, zone: string): string {
  const dayText = new Date(w.start).toLocaleDateString("en-US", {
    timeZone: zone,
    weekday: "short",
    month: "short",
    day: "numeric",
  });
  const t = (iso: string) =>
    new Date(iso).toLocaleTimeString("en-US", { timeZone: zone, hour: "numeric", minute: "2-digit" });
  return `${dayText}, ${t(w.start)} – ${t(w.end)} ${zoneShort(zone, w.start)}`;
}

/** The offset of `zone` from UTC at instant `t`, in ms. */
function offsetAt(zone: string, t: number): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    })
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  const wall = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return wall - Math.floor(t / 1000) * 1000;
}

/** A wall-clock time in `zone` ("2026-12-08T09:00", as a datetime-local input gives it) as an ISO instant. */
function zonedToIso(local: string, zone: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local);
  if (!m) return null;
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  let t = wall - offsetAt(zone, wall);
  t = wall - offsetAt(zone, t);
  return new Date(t).toISOString();
}

/** An instant as the wall-clock time in `zone`, for a datetime-local input. */
function isoToZoned(iso: string, zone: string): string {
  const t = Date.parse(iso);
  return new Date(t + offsetAt(zone, t)).toISOString().slice(0, 16);
}

const WEEKDAY: Record<string, string> = {
  MO: "Monday",
  TU: "Tuesday",
  WE: "Wednesday",
  TH: "Thursday",
  FR: "Friday",
  SA: "Saturday",
  SU: "Sunday",
};
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

function ordinal(n: number): string {
  if (n === -1) return "last";
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th");
  return `${n}${s}`;
}

/** A simple RRULE in words ("every 3 months, on the 2nd Tuesday"); null when the rule is beyond these words. */
function ruleInWords(rule: string): string | null {
  const parts = new Map(
    rule
      .toUpperCase()
      .split(";")
      .map((p) => p.split("=") as [string, string]),
  );
  const freq = parts.get("FREQ");
  const interval = Number(parts.get("INTERVAL") ?? "1");
  const unit = { DAILY: "day", WEEKLY: "week", MONTHLY: "month", YEARLY: "year" }[freq ?? ""];
  if (!unit || !Number.isInteger(interval) || interval < 1) return null;
  const known = new Set(["FREQ", "INTERVAL", "BYDAY", "BYMONTH", "BYMONTHDAY"]);
  if ([...parts.keys()].some((k) => !known.has(k))) return null;
  const words: string[] = [interval === 1 ? `every ${unit}` : `every ${interval} ${unit}s`];
  const month = parts.get("BYMONTH");
  if (month) {
    const names = month.split(",").map((m) => MONTHS[Number(m) - 1]);
    if (names.some((n) => !n)) return null;
    words.push(`in ${names.join(", ")}`);
  }
  const byDay = parts.get("BYDAY");
  if (byDay) {
    const days: string[] = [];
    for (const d of byDay.split(",")) {
      const m = /^(-?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(d);
      if (!m) return null;
      const name = WEEKDAY[m[2] as string] as string;
      days.push(m[1] ? `the ${ordinal(Number(m[1]))} ${name}` : name);
    }
    words.push(`on ${days.join(", ")}`);
  }
  const monthDay = parts.get("BYMONTHDAY");
  if (monthDay) {
    const n = monthDay.split(",").map(Number);
    if (n.some((x) => !Number.isInteger(x))) return null;
    words.push(`on the ${n.map((x) => (x === -1 ? "last day" : ordinal(x))).join(", ")}`);
  }
  const text = words.join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Monday 00:00 UTC of the week `iso` falls in (in `zone`'s calendar), as YYYY-MM-DD. */
function weekOf(iso: string, zone: string): string {
  const local = new Date(Date.parse(isoToZoned(iso, zone).slice(0, 10)));
  const back = (local.getUTCDay() + 6) % 7;
  return new Date(local.getTime() - back * DAY_MS).toISOString().slice(0, 10);
}

function siteZone(siteId: string): string {
  return sites.value.get(siteId)?.time_zone ?? "UTC";
}

function siteName(siteId: string): string {
  return sites.value.get(siteId)?.name ?? siteId;
}

function percent(v: number | null): string {
  return v === null ? "—" : `${Math.round(v * 1000) / 10} %`;
}

/** The account's planned orders and their statuses, as the orders' list keeps them live (the event stream):
 * when one changes (generated, done, cancelled by a skip elsewhere), the occurrences are read again. */
const plannedOrders = computed(() =>
  [...accountOrders.value.values()]
    .filter((o) => isPlannedReference(o.reference_id))
    .map((o) => `${o.order_id}:${o.status}`)
    .sort()
    .join(","),
);

/** Reads the occurrences again a moment after the account's planned orders change (one read for a burst). */
function useFollowPlannedOrders() {
  const seen = useRef<string | null>(null);
  const now = plannedOrders.value;
  useEffect(() => {
    if (seen.current === null || seen.current === now) {
      seen.current = now;
      return;
    }
    seen.current = now;
    const timer = setTimeout(() => {
      loadOccurrences().catch(() => {
        // The next change or visit reads them again; the list shown stays as it was.
      });
    }, 300);
    return () => clearTimeout(timer);
  }, [now]);
}

export function PlansView(props: { onOpenOrder: (orderId: string) => void }) {
  useEffect(() => {
    void load();
  }, []);
  useFollowPlannedOrders();
  const list = occurrences.value;
  const overdue = list.filter((o) => o.status === "overdue");
  const rest = list.filter((o) => o.status !== "overdue");
  const weeks = new Map<string, Occurrence[]>();
  for (const o of rest) {
    const w = weekOf(o.window.start, siteZone(o.site_id));
    weeks.set(w, [...(weeks.get(w) ?? []), o]);
  }
  return (
    <section class="plans" aria-labelledby="plans-title">
      <div class="board-head">
        <h1 id="plans-title">Planned maintenance</h1>
        <div class="stats">
          <span class="stat">
            <strong>{overdue.length}</strong> overdue
          </span>
          <span class="stat">
            <strong>{plans.value.length}</strong> active {plans.value.length === 1 ? "plan" : "plans"}
          </span>
        </div>
      </div>
      {loadError.value && (
        <p class="error" role="alert">
          {loadError.value}
        </p>
      )}
      {compliance.value && <ComplianceCard figures={compliance.value} />}
      <section class="card calendar" aria-labelledby="calendar-title">
        <h2 id="calendar-title">Occurrences</h2>
        <p class="hint">Overdue first, then by week; each window in its site's local time.</p>
        {list.length === 0 ? (
          <p class="empty">{loading.value ? "Loading…" : "No occurrence in the coming weeks."}</p>
        ) : (
          <>
            {overdue.length > 0 && (
              <OccurrenceGroup
                title="Overdue"
                id="week-overdue"
                list={overdue}
                onOpenOrder={props.onOpenOrder}
              />
            )}
            {[...weeks.entries()]
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([week, items]) => (
                <OccurrenceGroup
                  key={week}
                  id={`week-${week}`}
                  title={`Week of ${new Date(`${week}T12:00:00Z`).toLocaleDateString("en-US", {
                    weekday: "short",
                    month: "short",
                    day: "numeric",
                    timeZone: "UTC",
                  })}`}
                  list={items}
                  onOpenOrder={props.onOpenOrder}
                />
              ))}
          </>
        )}
      </section>
      <PlanList />
    </section>
  );
}

function ComplianceCard({ figures }: { figures: Compliance }) {
  const all = figures.planned_maintenance;
  return (
    <section class="card compliance" aria-labelledby="compliance-title">
      <h2 id="compliance-title">Compliance, last 90 days</h2>
      <p class="compliance-figure">
        <strong data-compliance-rate={all.compliance_rate.value ?? ""}>
          {percent(all.compliance_rate.value)}
        </strong>{" "}
        <span class="muted">
          done within their window: {all.completed_in_window} of {all.occurrences_due} due
          {all.completed_late > 0 && `, ${all.completed_late} late`}
          {all.not_done > 0 && `, ${all.not_done} not done`}
        </span>
      </p>
      {figures.by_site.length > 0 && (
        <ul class="compliance-sites">
          {figures.by_site.map((s) => (
            <li key={s.site_id} data-site-id={s.site_id}>
              <span>{s.site_name ?? s.site_id}</span>{" "}
              <strong>{percent(s.planned_maintenance.compliance_rate.value)}</strong>{" "}
              <span class="muted">
                ({s.planned_maintenance.completed_in_window}/{s.planned_maintenance.occurrences_due})
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function OccurrenceGroup(props: {
  title: string;
  id: string;
  list: Occurrence[];
  onOpenOrder: (orderId: string) => void;
}) {
  return (
    <section class="week" aria-labelledby={props.id}>
      <h3 id={props.id}>{props.title}</h3>
      <ul class="occurrences">
        {props.list.map((o) => (
          <OccurrenceRow
            key={`${o.plan_id}/${o.occurrence_key}`}
            occurrence={o}
            onOpenOrder={props.onOpenOrder}
          />
        ))}
      </ul>
    </section>
  );
}

function OccurrenceRow({
  occurrence: o,
  onOpenOrder,
}: {
  occurrence: Occurrence;
  onOpenOrder: (orderId: string) => void;
}) {
  const [action, setAction] = useState<"skip" | "move" | null>(null);
  const zone = siteZone(o.site_id);
  return (
    <li
      class={`occurrence occ-${o.status}`}
      data-plan-id={o.plan_id}
      data-occurrence-key={o.occurrence_key}
      data-status={o.status}
    >
      <div class="occ-line">
        <span class={`badge occ-badge occ-badge-${o.status}`}>{STATUS_TEXT[o.status]}</span>
        <span class="occ-main">
          <span class="occ-title">
            {o.plan_name} <span class="muted">· {titleCase(o.trade)}</span>
          </span>
          <span class="occ-where">
            {siteName(o.site_id)} · {windowIn(o.window, zone)} <span class="muted">({zone})</span>
          </span>
          {o.moved_from && <span class="muted occ-note">Moved from {windowIn(o.moved_from, zone)}</span>}
          {o.reason && <span class="muted occ-note">“{o.reason}”</span>}
        </span>
        <span class="occ-side">
          {o.order_id && (
            <button
              type="button"
              class="link-button"
              aria-label={`Open order ${o.order_id}`}
              onClick={() => onOpenOrder(o.order_id as string)}
            >
              {o.order_id}
            </button>
          )}
          {ACTIONABLE.has(o.status) && (
            <span class="occ-actions">
              <button
                type="button"
                class="btn btn-quiet btn-small"
                aria-expanded={action === "skip"}
                onClick={() => setAction(action === "skip" ? null : "skip")}
              >
                Skip
              </button>
              <button
                type="button"
                class="btn btn-quiet btn-small"
                aria-expanded={action === "move"}
                onClick={() => setAction(action === "move" ? null : "move")}
              >
                Move
              </button>
            </span>
          )}
        </span>
      </div>
      {action && (
        <OccurrenceAction occurrence={o} zone={zone} action={action} onDone={() => setAction(null)} />
      )}
    </li>
  );
}

function OccurrenceAction(props: {
  occurrence: Occurrence;
  zone: string;
  action: "skip" | "move";
  onDone: () => void;
}) {
  const { occurrence: o, zone, action } = props;
  const [reason, setReason] = useState("");
  const [start, setStart] = useState(isoToZoned(o.window.start, zone));
  const [end, setEnd] = useState(isoToZoned(o.window.end, zone));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = (name: string) => `occ-${action}-${name}-${o.plan_id}-${o.occurrence_key}`;
  const submit = async () => {
    const why = reason.trim();
    if (!why) {
      setError(`A reason is required to ${action} an occurrence: it is kept in the audit log.`);
      return;
    }
    const body: Record<string, unknown> = {
      plan_id: o.plan_id,
      occurrence_key: o.occurrence_key,
      reason: why,
    };
    if (action === "move") {
      const s = zonedToIso(start, zone);
      const e = zonedToIso(end, zone);
      if (!s || !e) {
        setError("Give the new window's start and end.");
        return;
      }
      body.service_window = { start: s, end: e };
    }
    setBusy(true);
    setError(null);
    try {
      const after = await post<Occurrence>(`/api/dispatch/v1/occurrences/${action}`, body);
      occurrences.value = occurrences.value.map((x) =>
        x.plan_id === after.plan_id && x.occurrence_key === after.occurrence_key ? after : x,
      );
      props.onDone();
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "That did not go through; try again.");
      setBusy(false);
    }
  };
  return (
    <form
      class="occ-form"
      aria-label={action === "skip" ? "Skip occurrence" : "Move occurrence"}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {action === "move" && (
        <fieldset class="occ-window">
          <legend>New window ({zone})</legend>
          <label for={id("start")}>From</label>
          <input
            class="occ-field"
            id={id("start")}
            type="datetime-local"
            value={start}
            onInput={(e) => setStart((e.target as HTMLInputElement).value)}
          />
          <label for={id("end")}>To</label>
          <input
            class="occ-field"
            id={id("end")}
            type="datetime-local"
            value={end}
            onInput={(e) => setEnd((e.target as HTMLInputElement).value)}
          />
        </fieldset>
      )}
      <label for={id("reason")}>Reason (required; kept in the audit log)</label>
      <input
        class="occ-field"
        id={id("reason")}
        maxLength={500}
        value={reason}
        aria-invalid={error !== null}
        aria-describedby={error ? id("error") : undefined}
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="field-error" id={id("error")} role="alert">
          {error}
        </p>
      )}
      <div class="nte-actions">
        <button type="button" class="btn btn-quiet" onClick={props.onDone}>
          Cancel
        </button>
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {action === "skip" ? "Skip occurrence" : "Move occurrence"}
        </button>
      </div>
    </form>
  );
}

/** The next occurrence of each plan still to come (upcoming or generated), by window start. */
function nextOf(planId: string): Occurrence | undefined {
  const at = Date.now();
  return occurrences.value
    .filter(
      (o) =>
        o.plan_id === planId &&
        (o.status === "upcoming" || o.status === "generated") &&
        Date.parse(o.window.end) > at,
    )
    .sort((a, b) => a.window.start.localeCompare(b.window.start))[0];
}

function PlanList() {
  const list = plans.value;
  return (
    <section class="card plan-list" aria-labelledby="plan-list-title">
      <h2 id="plan-list-title">Plans</h2>
      {list.length === 0 ? (
        <p class="empty">
          {loading.value ? "Loading…" : "No plans yet. Plans you create through the API show here."}
        </p>
      ) : (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a table wider than a phone scrolls in its own box, by keyboard too (axe: scrollable-region-focusable).
        <section class="table-wrap" tabIndex={0} aria-label="Plans, scrollable">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Site</th>
                <th scope="col">Rule</th>
                <th scope="col">Window</th>
                <th scope="col">Next</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => {
                const next = nextOf(p.plan_id);
                return (
                  <tr key={p.plan_id} data-plan-id={p.plan_id}>
                    <th scope="row">
                      {p.name} <span class="muted">· {titleCase(p.trade)}</span>
                    </th>
                    <td>{siteName(p.site_id)}</td>
                    <td>
                      {ruleInWords(p.recurrence) && (
                        <span class="rule-words">{ruleInWords(p.recurrence)}</span>
                      )}
                      <code class="rrule">{p.recurrence}</code>
                    </td>
                    <td>
                      {p.window.days.map(titleCase).join(", ")} {p.window.start}–{p.window.end}{" "}
                      <span class="muted">({p.time_zone})</span>
                    </td>
                    <td>{next ? windowIn(next.window, p.time_zone) : <span class="muted">—</span>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}
