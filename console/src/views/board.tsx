// The dispatch team's board: every order of the key's mode, live. The tray of orders that need a human
// first, then the offers with their deadlines counting down, then the jobs under way by status; an order's
// detail with the actions its status allows (assign through a contractor picker, cancel).

import { computed, type ReadonlySignal, signal } from "@preact/signals";
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { isPlannedReference } from "../../../src/domain/maintenance/plan";
import { URGENCIES } from "../../../src/domain/pricing";
import { ApiProblem, eachPage, get, post } from "../api";
import {
  ago,
  clock,
  minute,
  money,
  now,
  place,
  relative,
  STATUS_LABEL,
  timeLeft,
  titleCase,
  zoned,
  zonedSpan,
} from "../format";
import { subscribe } from "../live";
import type { Contractor, Order, OrderStatus, ServiceLevel, StreamEvent } from "../types";
import { type DndEntry, exclusionOf, useAccountExclusions } from "./do-not-dispatch";
import { Proof } from "./proof";
import { PlannedBadge, StatusPill } from "./status";
import { Timeline } from "./timeline";

const ORDERS = "/api/dispatcher/v1/orders";
const OPEN: OrderStatus[] = [
  "needs_dispatcher",
  "cannot_complete",
  "offered",
  "accepted",
  "en_route",
  "on_site",
];
/** Invoices held: sent and not yet approved (waiting for the account, or sent back to the contractor). */
const HELD: OrderStatus[] = ["invoiced", "revision_requested", "invoice_rejected"];
const ASSIGNABLE = new Set<OrderStatus>([
  "offered",
  "needs_dispatcher",
  "cannot_complete",
  "accepted",
  "en_route",
]);
const CANCELLABLE = new Set<OrderStatus>([
  "received",
  "offered",
  "needs_dispatcher",
  "cannot_complete",
  "accepted",
  "en_route",
  "on_site",
]);

type GroupId = "tray" | "offered" | "accepted" | "en_route" | "on_site" | "closed";

/** The group each status is shown in: a status the domain adds fails typecheck until it has one. */
const GROUP_OF: Record<OrderStatus, GroupId> = {
  needs_dispatcher: "tray",
  cannot_complete: "tray",
  received: "tray",
  offered: "offered",
  accepted: "accepted",
  en_route: "en_route",
  on_site: "on_site",
  completed: "closed",
  invoiced: "closed",
  revision_requested: "closed",
  invoice_rejected: "closed",
  approved: "closed",
  paid: "closed",
  cancelled: "closed",
};

const GROUPS: Array<{ id: GroupId; title: string; hint: string }> = [
  { id: "tray", title: "Needs a dispatcher", hint: "No contractor took these: assign one by hand." },
  { id: "offered", title: "Offered", hint: "Waiting for the contractor's answer." },
  { id: "accepted", title: "Accepted", hint: "" },
  { id: "en_route", title: "En route", hint: "" },
  { id: "on_site", title: "On site", hint: "" },
  { id: "closed", title: "Recently closed", hint: "" },
];

const orders = signal<Map<string, Order>>(new Map());
/** The board's orders, live: the map draws the same ones. */
export const boardOrders: ReadonlySignal<Map<string, Order>> = orders;
const loading = signal(true);
const loadError = signal<string | null>(null);
const selected = signal<string | null>(null);
const filterText = signal("");
const filterTrade = signal("");
const filterStatus = signal("");
const filterUrgency = signal("");
const filterState = signal("");
/** One line an order (the default), or two: the dispatcher's choice, kept in this browser. */
const compact = signal(localStorage.getItem("fd.board.rows") !== "comfortable");

/** Opens an order's detail on the board (the map's points open orders here). */
export function openOrder(orderId: string) {
  selected.value = orderId;
}

/** The contractors' and accounts' names the lists and answers carried, by id: the event stream's orders
 * have none, and take them from here. */
const names = new Map<string, string>();

/** The order with its names: those it carries (learnt), else those learnt before. */
function named(o: Order): Order {
  if (o.contractor_id && o.contractor_name) names.set(o.contractor_id, o.contractor_name);
  if (o.account_id && o.account_name) names.set(o.account_id, o.account_name);
  return {
    ...o,
    contractor_name: o.contractor_name ?? (o.contractor_id ? (names.get(o.contractor_id) ?? null) : null),
    account_name: o.account_name ?? (o.account_id ? (names.get(o.account_id) ?? null) : null),
  };
}

/** A contractor's name where the board learnt it, else null. */
function contractorName(id: string): string | null {
  return names.get(id) ?? null;
}

/** Keeps the newer of two versions of an order (a list page and an event may arrive in either order). */
function upsert(list: Order[]) {
  const next = new Map(orders.value);
  for (const o of list) {
    const held = next.get(o.order_id);
    if (!held || held.updated_at <= o.updated_at) next.set(o.order_id, named({ ...held, ...o }));
  }
  orders.value = next;
}

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    // Every open and held order, to the last page (no cap: the work a dispatcher must see).
    const every = async (status: OrderStatus) => {
      const out: Order[] = [];
      for await (const page of eachPage<Order, "orders">(ORDERS, "orders", { status, limit: 200 })) {
        out.push(...page.items);
      }
      return out;
    };
    const pages = await Promise.all([
      ...[...OPEN, ...HELD].map(every),
      get<{ orders: Order[] }>(ORDERS, { limit: 50 }).then((p) => p.orders),
    ]);
    upsert(pages.flat());
  } catch (err) {
    loadError.value = err instanceof ApiProblem ? err.message : "The orders could not be loaded.";
  } finally {
    loading.value = false;
  }
}

/** Orders whose contractor's counter-offer waits on the account, by order id (its deadline). The order list
 * does not carry counters: the board learns them from the stream (order.countered), so a counter made
 * before the board was opened is not counted until the order changes again. */
const countersPending = signal<Map<string, string>>(new Map());

function trackCounter(event: StreamEvent, order: Order) {
  const counter = event.data.counter as { status?: string; deadline_at?: string } | undefined;
  const waiting = event.type === "order.countered" && counter?.status === "pending";
  if (!waiting && !countersPending.value.has(order.order_id)) return;
  const next = new Map(countersPending.value);
  if (waiting) next.set(order.order_id, counter?.deadline_at ?? "");
  else next.delete(order.order_id);
  countersPending.value = next;
}

function onEvent(event: StreamEvent) {
  const order = event.data.order as Order | undefined;
  if (!order?.order_id) return;
  upsert([order]);
  trackCounter(event, order);
}

const trades = computed(() => [...new Set([...orders.value.values()].map((o) => o.trade))].sort());
const states = computed(() => [...new Set([...orders.value.values()].map((o) => o.location.state))].sort());
/** An accepted job nobody set off for within this long is flagged at risk. */
const NO_MOVEMENT_MS = 60 * 60_000;

const visible = computed(() => {
  const text = filterText.value.trim().toLowerCase();
  const trade = filterTrade.value;
  const status = filterStatus.value;
  const urgency = filterUrgency.value;
  const state = filterState.value;
  return [...orders.value.values()].filter((o) => {
    if (trade && o.trade !== trade) return false;
    if (status && o.status !== status) return false;
    if (urgency && o.urgency !== urgency) return false;
    if (state && o.location.state !== state) return false;
    if (!text) return true;
    const hay = [
      o.order_id,
      o.description,
      o.reference_id,
      o.location.city,
      o.location.state,
      o.location.zip,
      o.location.name,
      o.location.address,
      o.trade,
      o.contractor_name,
      o.account_name,
    ]
      .filter(Boolean)
      .join(" ")
      .toLowerCase();
    return hay.includes(text);
  });
});

function groupOrders(group: (typeof GROUPS)[number], list: Order[]): Order[] {
  const inGroup = list.filter((o) => GROUP_OF[o.status] === group.id);
  if (group.id === "offered") {
    return inGroup.sort((a, b) => (a.offer_deadline_at ?? "~").localeCompare(b.offer_deadline_at ?? "~"));
  }
  const sorted = inGroup.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
  return group.id === "closed" ? sorted.slice(0, 30) : sorted;
}

export function Board() {
  useEffect(() => {
    const stop = subscribe(onEvent);
    void load();
    return () => {
      stop();
      orders.value = new Map();
      countersPending.value = new Map();
      selected.value = null;
    };
  }, []);
  const list = visible.value;
  const counts = Object.fromEntries(GROUPS.map((g) => [g.id, groupOrders(g, list).length]));
  const held = list.filter((o) => HELD.includes(o.status)).length;
  const current = selected.value ? orders.value.get(selected.value) : undefined;
  return (
    <div class={`board ${current ? "with-detail" : ""} ${compact.value ? "compact" : ""}`}>
      <section class="board-main" aria-label="Orders">
        <div class="board-head">
          <div class="board-title">
            <h1>Dispatch board</h1>
            <button
              type="button"
              class="btn btn-quiet density-toggle"
              aria-pressed={compact.value}
              onClick={() => {
                compact.value = !compact.value;
                localStorage.setItem("fd.board.rows", compact.value ? "compact" : "comfortable");
              }}
            >
              Compact rows
            </button>
          </div>
          <div class="stats">
            <span class="stat stat-alert">
              <strong>{counts.tray}</strong> need a dispatcher
            </span>
            <span class="stat">
              <strong>{counts.offered}</strong> offered
            </span>
            <span class="stat">
              <strong>{(counts.accepted ?? 0) + (counts.en_route ?? 0) + (counts.on_site ?? 0)}</strong> under
              way
            </span>
            <span
              class="stat"
              data-stat="invoices-held"
              title="Invoiced, sent back for a revision, or rejected"
            >
              <strong>{held}</strong> invoices held
            </span>
            <span
              class="stat"
              data-stat="counters-pending"
              title="Offers a contractor answered with a counter-offer, waiting on the account (seen live since the board opened)"
            >
              <strong>{countersPending.value.size}</strong> counters pending
            </span>
          </div>
        </div>
        <Filters />
        {loadError.value && (
          <p class="error" role="alert">
            {loadError.value}
          </p>
        )}
        {loading.value && orders.value.size === 0 ? (
          <p class="muted">Loading orders…</p>
        ) : (
          GROUPS.map((g) => <Group key={g.id} group={g} list={groupOrders(g, list)} />)
        )}
      </section>
      {/* Keyed by the order: what the dispatcher has under way in a detail (the contractor picked, the
          reasons typed, the search, the candidates found, the scroll) belongs to that order. A live
          update of the order keeps the key, so it re-renders the detail and resets nothing; another
          order opened gets a detail of its own instead of the previous order's pick and reason. */}
      {current && <Detail key={current.order_id} order={current} />}
    </div>
  );
}

function Filters() {
  return (
    <search class="filters">
      <input
        type="search"
        class="filter-text"
        aria-label="Filter orders"
        placeholder="Search id, description, place, name, reference…"
        value={filterText.value}
        onInput={(e) => {
          filterText.value = (e.target as HTMLInputElement).value;
        }}
      />
      <select
        aria-label="Trade"
        value={filterTrade.value}
        onChange={(e) => {
          filterTrade.value = (e.target as HTMLSelectElement).value;
        }}
      >
        <option value="">All trades</option>
        {trades.value.map((t) => (
          <option key={t} value={t}>
            {titleCase(t)}
          </option>
        ))}
      </select>
      <select
        aria-label="Urgency"
        value={filterUrgency.value}
        onChange={(e) => {
          filterUrgency.value = (e.target as HTMLSelectElement).value;
        }}
      >
        <option value="">Any urgency</option>
        {URGENCIES.map((u) => (
          <option key={u} value={u}>
            {titleCase(u)}
          </option>
        ))}
      </select>
      <select
        aria-label="State"
        value={filterState.value}
        onChange={(e) => {
          filterState.value = (e.target as HTMLSelectElement).value;
        }}
      >
        <option value="">All states</option>
        {states.value.map((st) => (
          <option key={st} value={st}>
            {st}
          </option>
        ))}
      </select>
      <select
        aria-label="Status"
        value={filterStatus.value}
        onChange={(e) => {
          filterStatus.value = (e.target as HTMLSelectElement).value;
        }}
      >
        <option value="">All statuses</option>
        {(Object.keys(STATUS_LABEL) as OrderStatus[]).map((s) => (
          <option key={s} value={s}>
            {STATUS_LABEL[s]}
          </option>
        ))}
      </select>
    </search>
  );
}

function Group({ group, list }: { group: (typeof GROUPS)[number]; list: Order[] }) {
  if (list.length === 0 && group.id !== "tray") return null;
  return (
    <section class={`group group-${group.id}`} aria-labelledby={`group-${group.id}`}>
      <h2 id={`group-${group.id}`}>
        {group.title} <span class="count">{list.length}</span>
      </h2>
      {group.hint && <p class="hint">{group.hint}</p>}
      {list.length === 0 ? (
        <p class="empty">Nothing waiting. New orders nobody takes appear here at once.</p>
      ) : (
        <ul class="rows">
          {list.map((o) => (
            <OrderRow key={o.order_id} order={o} />
          ))}
        </ul>
      )}
    </section>
  );
}

function OrderRow({ order }: { order: Order }) {
  // Only a row that counts down reads the clock that ticks every second.
  const counting = (order.status === "offered" && order.offer_deadline_at) || order.status === "en_route";
  const at = counting ? now.value : minute.value;
  const left =
    order.status === "offered" && order.offer_deadline_at ? timeLeft(order.offer_deadline_at, at) : null;
  const late = order.status === "en_route" && order.eta_at !== null && Date.parse(order.eta_at) < at;
  const stale = order.status === "accepted" && at - Date.parse(order.updated_at) > NO_MOVEMENT_MS;
  const sla = slaFlag(order, at);
  // At risk: an offer lapsing within a minute, an arrival overdue, an accepted job not moving, or a
  // service-level clock at risk or breached.
  const risk = (left !== null && left.seconds < 60) || late || stale || sla !== null;
  const isSelected = selected.value === order.order_id;
  return (
    <li
      class={`row st-row-${order.status} ${risk ? "at-risk" : ""} ${isSelected ? "selected" : ""}`}
      data-order-id={order.order_id}
      data-status={order.status}
    >
      <button
        type="button"
        class="row-open"
        aria-expanded={isSelected}
        onClick={() => {
          selected.value = isSelected ? null : order.order_id;
        }}
      >
        <StatusPill status={order.status} />
        <span class="row-main">
          <span class="row-title">
            {titleCase(order.trade)}
            {order.urgency !== "routine" && <span class={`urgency u-${order.urgency}`}>{order.urgency}</span>}
            <span class="row-place">{place(order.location)}</span>
            {isPlannedReference(order.reference_id) && <PlannedBadge />}
            {sla && <span class={`sla sla-${sla}`}>{STANDING_LABEL[sla]}</span>}
          </span>
          <span class="row-desc">
            <span class="row-who">
              {order.account_name ?? "—"}
              {order.contractor_id && <> · {order.contractor_name ?? order.contractor_id}</>}
            </span>{" "}
            {order.description}
          </span>
        </span>
        <span class="row-side">
          {left ? (
            <span class={`countdown ${left.seconds < 60 ? "urgent" : ""}`} title="Time left to accept">
              {left.text}
            </span>
          ) : order.status === "en_route" ? (
            <span class={`eta ${late ? "urgent" : ""}`}>ETA {clock(order.eta_at)}</span>
          ) : (
            <span class="muted">{ago(order.updated_at, at)}</span>
          )}
          <span class="row-id">{order.order_id}</span>
        </span>
      </button>
    </li>
  );
}

/** The open order read again whenever it changes (dispatcher.order): the event stream's orders carry
 * neither names nor the booked time, which this read brings (kept as the newer version by upsert). */
function useFreshOrder(order: Order) {
  useEffect(() => {
    let stale = false;
    get<Order>(`${ORDERS}/${encodeURIComponent(order.order_id)}`)
      .then((fresh) => {
        if (!stale) upsert([fresh]);
      })
      .catch(() => {
        // The list's version stands; the next change reads it again.
      });
    return () => {
      stale = true;
    };
  }, [order.order_id, order.updated_at]);
}

function Detail({ order }: { order: Order }) {
  const [message, setMessage] = useState<string | null>(null);
  useFreshOrder(order);
  return (
    <aside class="detail card" aria-label={`Order ${order.order_id}`}>
      <div class="detail-head">
        <div>
          <StatusPill status={order.status} />
          <h2>
            {titleCase(order.trade)} · {place(order.location)}
          </h2>
          <p class="row-id">{order.order_id}</p>
        </div>
        <button
          type="button"
          class="btn btn-quiet"
          aria-label="Close detail"
          onClick={() => {
            selected.value = null;
          }}
        >
          ✕
        </button>
      </div>
      <p class="detail-desc">{order.description}</p>
      <dl class="facts">
        <dt>Status</dt>
        <dd>{order.status_detail}</dd>
        <dt>Urgency</dt>
        <dd>{titleCase(order.urgency)}</dd>
        <dt>Site</dt>
        <dd>{[order.location.name, order.location.address].filter(Boolean).join(", ") || "—"}</dd>
        <dt>Estimate</dt>
        <dd>{money(order.estimated_cost_cents)}</dd>
        <dt>NTE</dt>
        <dd>{money(order.nte_cents)}</dd>
        {order.final_cost_cents !== null && (
          <>
            <dt>Final cost</dt>
            <dd>{money(order.final_cost_cents)}</dd>
          </>
        )}
        <dt>Contractor</dt>
        <dd>
          {order.contractor_id ? (
            <span title={order.contractor_id}>{order.contractor_name ?? order.contractor_id}</span>
          ) : (
            "—"
          )}
        </dd>
        <dt>Account</dt>
        <dd>
          {order.account_id ? (
            <span title={order.account_id}>{order.account_name ?? order.account_id}</span>
          ) : (
            "—"
          )}
        </dd>
        <dt>Reference</dt>
        <dd>{order.reference_id ?? "—"}</dd>
        <OrderTimes order={order} />
        <dt>Created</dt>
        <dd>{zoned(order.created_at, order.time_zone)}</dd>
        {order.status_reason && (
          <>
            <dt>Reason</dt>
            <dd>{order.status_reason}</dd>
          </>
        )}
      </dl>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      {ASSIGNABLE.has(order.status) && <AssignPanel order={order} onDone={setMessage} />}
      <Proof order={order} />
      <Timeline
        path="/api/dispatcher/v1/audit"
        orderId={order.order_id}
        version={order.updated_at}
        nameOf={contractorName}
        accountName={order.account_name ?? null}
        zone={order.time_zone ?? null}
      />
      {CANCELLABLE.has(order.status) && <CancelPanel order={order} onDone={setMessage} />}
    </aside>
  );
}

const CLOCK_LABEL = { respond: "Respond", arrive: "Arrive" } as const;
const STANDING_LABEL = {
  on_track: "on track",
  at_risk: "at risk",
  breached: "breached",
  met: "met",
} as const;

/** The times that matter, in the job's zone (named): when it is booked (the block of its contractor's
 * time the job holds, as the Schedule draws it), its arrival window, respond-by and arrive-by, and
 * its service-level clocks with their standing (at risk once its time passes, as the service rules). */
function OrderTimes({ order }: { order: Order }) {
  const zone = order.time_zone ?? null;
  const at = minute.value;
  const when = (iso: string) => {
    const near = relative(iso, at);
    return (
      <>
        <time dateTime={iso}>{zoned(iso, zone)}</time>
        {near && <span class="muted"> ({near})</span>}
      </>
    );
  };
  const window = order.arrival_window;
  const booked = order.booked;
  return (
    <>
      {booked && (
        <>
          <dt>Booked</dt>
          <dd data-fact="booked" data-start={booked.start} data-end={booked.end}>
            <time dateTime={booked.start}>{zonedSpan(booked.start, booked.end, zone)}</time>
            {relative(booked.start, at) && <span class="muted"> ({relative(booked.start, at)})</span>}
            {order.status === "offered" && <span class="muted"> · held while the offer waits</span>}
          </dd>
        </>
      )}
      {window && (
        <>
          <dt>Arrival window</dt>
          <dd data-fact="arrival-window">
            {when(window.start)} – <time dateTime={window.end}>{zoned(window.end, zone)}</time>
            {window.source !== "requested" && <span class="muted"> ({window.source})</span>}
          </dd>
        </>
      )}
      {order.respond_by && (
        <>
          <dt>Respond by</dt>
          <dd data-fact="respond-by">{when(order.respond_by)}</dd>
        </>
      )}
      {order.arrive_by && (
        <>
          <dt>Arrive by</dt>
          <dd data-fact="arrive-by">{when(order.arrive_by)}</dd>
        </>
      )}
      {(order.service_levels ?? []).map((c) => {
        const standing = liveStanding(c, at);
        return (
          <Fragment key={c.clock}>
            <dt>{CLOCK_LABEL[c.clock]} clock</dt>
            <dd data-sla={c.clock} data-standing={standing}>
              <span class={`sla sla-${standing}`}>{STANDING_LABEL[standing]}</span> · due {when(c.deadline)}
            </dd>
          </Fragment>
        );
      })}
    </>
  );
}

/** The worst standing of the order's clocks when at risk or breached, else null. */
export function slaFlag(order: Order, at: number): "at_risk" | "breached" | null {
  const standings = (order.service_levels ?? []).map((c) => liveStanding(c, at));
  return standings.includes("breached") ? "breached" : standings.includes("at_risk") ? "at_risk" : null;
}

/** A clock's standing now: the service's, moved on by the time passed since it answered. */
function liveStanding(c: ServiceLevel, at: number): ServiceLevel["standing"] {
  if (c.standing === "breached" || c.standing === "met") return c.standing;
  if (at > Date.parse(c.deadline)) return "breached";
  if (c.standing === "at_risk" || at >= Date.parse(c.at_risk_at)) return "at_risk";
  return "on_track";
}

/** Active contractors where the job is, of its trade, found by name as typed (after a pause), each with
 * its shift and whether it can be there in time for the order (order_id); when none of its trade is
 * there, every active contractor there (`anyTrade`). Read again when the order's time moves (its window
 * or arrive-by), not on every update of the order: the pick stands either way. */
function useCandidates(order: Order, name: string, onError: (message: string) => void) {
  const [found, setFound] = useState<Contractor[] | null>(null);
  const [anyTrade, setAnyTrade] = useState(false);
  const timeKey = [order.arrive_by, order.arrival_window?.start, order.arrival_window?.end].join("|");
  useEffect(() => {
    let stale = false;
    const timer = setTimeout(async () => {
      const base = {
        state: order.location.state,
        zip: order.location.zip ?? undefined,
        status: "active",
        name: name.trim() || undefined,
        order_id: order.order_id,
        limit: 20,
      };
      try {
        let list = (
          await get<{ contractors: Contractor[] }>("/api/dispatcher/v1/contractors", {
            ...base,
            trade: order.trade,
          })
        ).contractors;
        let widened = false;
        // Nobody of the trade where the job is: show every active contractor there, and say so.
        if (list.length === 0) {
          list = (await get<{ contractors: Contractor[] }>("/api/dispatcher/v1/contractors", base))
            .contractors;
          widened = list.length > 0;
        }
        if (!stale) {
          setFound(list);
          setAnyTrade(widened);
        }
      } catch (err) {
        if (!stale) onError(err instanceof ApiProblem ? err.message : "The contractor search failed.");
      }
    }, 200);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [order.order_id, name, timeKey]);
  return { found, anyTrade };
}

function AssignPanel({ order, onDone }: { order: Order; onDone: (m: string) => void }) {
  const [name, setName] = useState("");
  const [picked, setPicked] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [onShiftOnly, setOnShiftOnly] = useState(false);
  const { found, anyTrade } = useCandidates(order, name, setError);
  // The account's exclusions: a contractor on its list for this trade is marked and cannot be picked.
  const exclusions = useAccountExclusions(order.account_id);
  const excluded = (id: string) => exclusionOf(exclusions ?? [], id, order.trade);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!picked) return;
    setBusy(true);
    setError(null);
    try {
      const updated = await post<Order>("/api/dispatcher/v1/orders/assign", {
        order_id: order.order_id,
        contractor_id: picked,
        reason: reason.trim(),
      });
      upsert([updated]);
      setReason("");
      setPicked(null);
      onDone(`Assigned to ${found?.find((c) => c.contractor_id === picked)?.name ?? picked}.`);
    } catch (err) {
      // 409 contractor_excluded (an entry the list did not have yet): the service's words, naming it.
      if (err instanceof ApiProblem && err.code === "contractor_excluded") {
        setError(`Excluded by the account: ${err.message}`);
        setPicked(null);
      } else setError(err instanceof ApiProblem ? err.message : "The assignment failed.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel" onSubmit={submit} aria-label="Assign a contractor">
      <h3>{order.contractor_id && order.status !== "offered" ? "Reassign" : "Assign a contractor"}</h3>
      <input
        type="search"
        aria-label="Find a contractor by name"
        placeholder="Find a contractor by name…"
        value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
      />
      {anyTrade && (
        <p class="hint">No active {titleCase(order.trade)} contractor here: showing every trade.</p>
      )}
      {found === null ? (
        <p class="muted">Searching…</p>
      ) : found.length === 0 ? (
        <p class="muted">No active contractor in {order.location.state} matches.</p>
      ) : (
        <ContractorPicker
          order={order}
          found={found}
          picked={picked}
          onPick={setPicked}
          excluded={excluded}
          onShiftOnly={onShiftOnly}
          setOnShiftOnly={setOnShiftOnly}
        />
      )}
      <label for={`assign-reason-${order.order_id}`}>Reason</label>
      <input
        id={`assign-reason-${order.order_id}`}
        required
        maxLength={1000}
        placeholder="Why this contractor (kept in the audit log)"
        value={reason}
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="btn btn-primary" disabled={busy || !picked || !reason.trim()}>
        Assign
      </button>
    </form>
  );
}

/** The contractors found, one to pick, in the service's order (nearest first): trades, rating, distance
 * and free capacity; its shift in its own zone (on shift until when, or off and back when, its time off
 * today) and whether it can be on site in time for the order, an off-shift one marked. One the order's
 * account excludes from its trade is marked, with the account's reason, and cannot be picked. */
function ContractorPicker(props: {
  order: Order;
  found: Contractor[];
  picked: string | null;
  onPick: (id: string) => void;
  excluded: (id: string) => DndEntry | undefined;
  /** "Only on shift": the others hidden (the one picked stays). Kept by the panel, across searches. */
  onShiftOnly: boolean;
  setOnShiftOnly: (on: boolean) => void;
}) {
  const at = minute.value;
  const rows = props.found.map((c) => ({ c, shift: shiftNow(c, at) }));
  const shown = props.onShiftOnly
    ? rows.filter((r) => r.shift.state === "on" || r.c.contractor_id === props.picked)
    : rows;
  const hidden = rows.length - shown.length;
  return (
    <>
      <label class="pick-filter">
        <input
          type="checkbox"
          checked={props.onShiftOnly}
          onChange={(e) => props.setOnShiftOnly((e.target as HTMLInputElement).checked)}
        />{" "}
        Only on shift
      </label>
      <ul class="picker" aria-label="Contractors">
        {shown.map(({ c, shift }) => {
          const entry = props.excluded(c.contractor_id);
          const noteId = `excluded-${c.contractor_id}`;
          return (
            <li
              key={c.contractor_id}
              data-contractor-id={c.contractor_id}
              data-excluded={entry ? "true" : undefined}
              data-shift={shift.state}
              data-arrival={c.arrival ? (c.arrival.fits ? "fits" : "late") : undefined}
              class={[
                props.picked === c.contractor_id ? "picked" : entry ? "excluded" : "",
                shift.state === "on" ? "" : "off-shift",
              ].join(" ")}
            >
              <label>
                <input
                  type="radio"
                  name="contractor"
                  value={c.contractor_id}
                  disabled={entry !== undefined}
                  aria-describedby={entry ? noteId : undefined}
                  checked={props.picked === c.contractor_id}
                  onChange={() => props.onPick(c.contractor_id)}
                />
                <span class="pick-main">
                  <span class="pick-name">{c.name}</span>
                  <span class="pick-meta">
                    {c.trades.map(titleCase).join(", ")} · ★ {c.rating.toFixed(1)}
                    {c.distance_miles !== null && ` · ${c.distance_miles} mi`}
                  </span>
                  <span class={`pick-shift shift-${shift.state}`}>{shift.text}</span>
                  {c.shift.time_off_today.map((p) => (
                    <span key={p.start} class="pick-off">
                      Time off today {spanIn(p.start, p.end, c.time_zone, at)}
                    </span>
                  ))}
                  {c.arrival && <ArrivalLine order={props.order} arrival={c.arrival} at={at} />}
                  {entry && (
                    <span class="pick-excluded" id={noteId}>
                      Excluded by the account (
                      {entry.trades ? entry.trades.map(titleCase).join(", ") : "every trade"}): {entry.reason}
                    </span>
                  )}
                </span>
                <span class={`cap ${c.capacity.free === 0 ? "cap-full" : ""}`}>
                  {c.capacity.free}/{c.capacity.max_active_jobs} free
                </span>
              </label>
            </li>
          );
        })}
      </ul>
      {hidden > 0 && (
        <p class="hint">
          {hidden} off shift hidden ({hidden === 1 ? "it is" : "they are"} still assignable).
        </p>
      )}
    </>
  );
}

/** A time in `zone` as a person reads it: "7:00 AM EST" on the day of `at` there, else "Wed 7:00 AM
 * EST" (without the zone's name when `named` is false). */
function localTime(iso: string, zone: string, at: number, named = true): string {
  const when = new Date(iso);
  const day = (d: Date) => d.toLocaleDateString("en-US", { timeZone: zone });
  const time = when.toLocaleTimeString("en-US", {
    timeZone: zone,
    hour: "numeric",
    minute: "2-digit",
    ...(named ? { timeZoneName: "short" } : {}),
  });
  if (day(when) === day(new Date(at))) return time;
  return `${when.toLocaleDateString("en-US", { timeZone: zone, weekday: "short" })} ${time}`;
}

/** "2:00 PM – 3:00 PM EST" (each end named by its day when not today). */
function spanIn(start: string, end: string, zone: string, at: number): string {
  return `${localTime(start, zone, at, false)} – ${localTime(end, zone, at)}`;
}

/** Its shift read now (the directory's answer moved on by the minute: a shift that ended says so). */
function shiftNow(c: Contractor, at: number): { state: "on" | "off" | "time_off"; text: string } {
  const s = c.shift;
  const zone = c.time_zone;
  if (s.on_shift) {
    if (s.ends_at === null) return { state: "on", text: "On shift" };
    if (Date.parse(s.ends_at) > at) {
      return { state: "on", text: `On shift until ${localTime(s.ends_at, zone, at)}` };
    }
    return { state: "off", text: `Off shift since ${localTime(s.ends_at, zone, at)}` };
  }
  const back = s.next_on_shift_at;
  if (back !== null && Date.parse(back) <= at) return { state: "on", text: "On shift" };
  const state = s.off_reason === "time_off" ? "time_off" : "off";
  const label = state === "time_off" ? "Time off" : "Off shift";
  return {
    state,
    text:
      back === null ? `${label} · not back within 14 days` : `${label} · back ${localTime(back, zone, at)}`,
  };
}

/** Whether it can be on site in the order's window, or by its arrive-by (in the job's zone). */
function ArrivalLine(props: { order: Order; arrival: NonNullable<Contractor["arrival"]>; at: number }) {
  const { order, arrival, at } = props;
  const zone = order.time_zone ?? "UTC";
  const window = order.arrival_window;
  const by = window
    ? `in the window (by ${localTime(window.end, zone, at)})`
    : order.arrive_by
      ? `by ${localTime(order.arrive_by, zone, at)}`
      : "in time";
  const earliest = arrival.earliest_at ? ` · earliest ${localTime(arrival.earliest_at, zone, at)}` : "";
  return arrival.fits ? (
    <span class="pick-arrival arrival-fits">
      Can be there {by}
      {earliest}
    </span>
  ) : (
    <span class="pick-arrival arrival-late">
      Cannot be there {by}
      {arrival.earliest_at ? earliest : " · no time free"}
    </span>
  );
}

function CancelPanel({ order, onDone }: { order: Order; onDone: (m: string) => void }) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const updated = await post<Order>("/api/dispatcher/v1/orders/cancel", {
        order_id: order.order_id,
        reason: reason.trim(),
      });
      upsert([updated]);
      setReason("");
      onDone("The order is cancelled.");
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The cancellation failed.");
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel panel-danger" onSubmit={submit} aria-label="Cancel the order">
      <h3>Cancel</h3>
      <label for={`cancel-reason-${order.order_id}`}>Cancellation reason</label>
      <input
        id={`cancel-reason-${order.order_id}`}
        required
        maxLength={1000}
        placeholder="Why (kept in the audit log)"
        value={reason}
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="btn btn-danger" disabled={busy || !reason.trim()}>
        Cancel order
      </button>
    </form>
  );
}
