// The account's orders, newest first, with their status kept live by the event stream, and the
// contractors' requests to raise an order's NTE waiting for the account's decision (Approve / Reject).

import { type ReadonlySignal, signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { isPlannedReference } from "../../../src/domain/maintenance/plan";
import { ApiProblem, allPages, get, post } from "../api";
import { ago, clock, minute, money, place, titleCase } from "../format";
import { subscribe } from "../live";
import type { Counter, Order, OrderStatus, StreamEvent } from "../types";
import { CounterDecision } from "./counters";
import { ExcludeContractor } from "./do-not-dispatch";
import { NotificationsPanel } from "./notifications";
import { Proof } from "./proof";
import { OrderRating, rateable } from "./ratings";
import { ArrivalWhen, PlannedBadge, StatusPill } from "./status";

/** Orders whose arrival is still ahead: their rows say when the contractor is to be there. */
const OPEN_WORK = new Set<OrderStatus>([
  "received",
  "offered",
  "accepted",
  "needs_dispatcher",
  "cannot_complete",
]);

import { Timeline } from "./timeline";
import { TrackingLinkPanel } from "./tracking-link";

const orders = signal<Map<string, Order>>(new Map());
/** The account's orders, live: its map draws the same ones. */
export const accountOrders: ReadonlySignal<Map<string, Order>> = orders;
const loading = signal(true);
const loadError = signal<string | null>(null);
/** The order whose timeline is open. */
const expanded = signal<string | null>(null);

/** A contractor's request to raise an order's NTE, waiting for this account's decision. */
interface NteAsk {
  request_id: string;
  requested_cents: number;
  reason: string;
}
/** The pending request of each order that has one. */
const asks = signal<Map<string, NteAsk>>(new Map());
/** Orders a contractor holds with an NTE: the ones that may have a request waiting. */
const MAY_ASK = new Set<OrderStatus>(["accepted", "en_route", "on_site"]);

function setAsk(orderId: string, ask: NteAsk | null) {
  const next = new Map(asks.value);
  if (ask) next.set(orderId, ask);
  else next.delete(orderId);
  asks.value = next;
}

/** The counter-offer waiting on each order that has one (the list leaves counters out; the order has it). */
const counters = signal<Map<string, Counter>>(new Map());

function setCounter(orderId: string, counter: Counter | null) {
  const next = new Map(counters.value);
  if (counter?.status === "pending") next.set(orderId, counter);
  else next.delete(orderId);
  counters.value = next;
}

const OPEN = new Set<OrderStatus>([
  "received",
  "offered",
  "accepted",
  "en_route",
  "on_site",
  "needs_dispatcher",
]);

/** Opens an order's timeline in the list (the map's points open orders here). */
export function openOrderTimeline(orderId: string) {
  expanded.value = orderId;
}

/** Keeps the newer of two versions of an order; fields only the list carries (its coordinates) stay when
 * an action's answer leaves them out. */
function upsert(list: Order[]) {
  const next = new Map(orders.value);
  for (const o of list) {
    const held = next.get(o.order_id);
    if (!held || held.updated_at <= o.updated_at) next.set(o.order_id, { ...held, ...o });
  }
  orders.value = next;
}

function onEvent(event: StreamEvent) {
  const order = event.data.order as Order | undefined;
  if (!order?.order_id) return;
  upsert([order]);
  if (event.type === "order.countered") setCounter(order.order_id, event.data.counter as Counter);
  else if (counters.value.has(order.order_id)) setCounter(order.order_id, null);
  if (event.type === "order.nte_requested") {
    const ask = event.data.nte_request as NteAsk | undefined;
    if (ask) setAsk(order.order_id, ask);
  } else if (
    event.type === "order.nte_approved" ||
    event.type === "order.nte_rejected" ||
    !MAY_ASK.has(order.status)
  ) {
    setAsk(order.order_id, null);
  }
}

/** The pending requests of the orders that may have one (the list leaves requests out; the order has them). */
async function loadAsks(list: Order[]) {
  const candidates = list.filter(
    (o) => (o.nte_cents !== null && MAY_ASK.has(o.status)) || o.status === "offered",
  );
  for (const o of candidates) {
    const full = await get<{ nte_requests: Array<NteAsk & { status: string }>; counter?: Counter | null }>(
      `/api/dispatch/v1/orders/${o.order_id}`,
    );
    const pending = full.nte_requests.find((r) => r.status === "pending");
    if (pending) setAsk(o.order_id, pending);
    if (full.counter?.status === "pending") setCounter(o.order_id, full.counter);
  }
}

/** The newest orders the list loads (the rest are the API's and the exports'). */
const LOADED = 300;
/** The account has more orders than the list loaded. */
const older = signal(false);

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    const list = await allPages<Order, "orders">("/api/dispatch/v1/orders", "orders", { limit: 100 }, 3);
    older.value = list.length >= LOADED;
    upsert(list);
    await loadAsks(list);
  } catch (err) {
    loadError.value = err instanceof ApiProblem ? err.message : "Your orders could not be loaded.";
  } finally {
    loading.value = false;
  }
}

export function AccountView() {
  useEffect(() => {
    const stop = subscribe(onEvent);
    void load();
    return () => {
      stop();
      orders.value = new Map();
      asks.value = new Map();
      counters.value = new Map();
    };
  }, []);
  const list = [...orders.value.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const open = list.filter((o) => OPEN.has(o.status)).length;
  const at = minute.value;
  return (
    <section class="account" aria-labelledby="orders-title">
      <div class="board-head">
        <h1 id="orders-title">My orders</h1>
        <div class="stats">
          <span class="stat">
            <strong>{open}</strong> open
          </span>
          <span class="stat">
            <strong>{list.length}</strong> in all
          </span>
        </div>
      </div>
      {loadError.value && (
        <p class="error" role="alert">
          {loadError.value}
        </p>
      )}
      {older.value && (
        <p class="muted list-cap" data-loaded={LOADED}>
          Showing your newest {LOADED} orders and those that change while you watch; the API lists and exports
          every one.
        </p>
      )}
      {list.length === 0 ? (
        <p class="empty">
          {loading.value ? "Loading…" : "No orders yet. Orders you place through the API show here, live."}
        </p>
      ) : (
        <ul class="rows account-rows">
          {list.map((o) => (
            <li
              key={o.order_id}
              class={`row st-row-${o.status}`}
              data-order-id={o.order_id}
              data-status={o.status}
            >
              <div class="row-open static">
                <StatusPill status={o.status} />
                <span class="row-main">
                  <span class="row-title">
                    {titleCase(o.trade)}
                    <span class="row-place">{place(o.location)}</span>
                    {isPlannedReference(o.reference_id) && <PlannedBadge />}
                    {o.reference_id && <span class="ref">{o.reference_id}</span>}
                  </span>
                  <span class="row-desc">{o.description}</span>
                  <span class="row-detail">{o.status_detail}</span>
                  {OPEN_WORK.has(o.status) && (
                    <span class="row-when">
                      <ArrivalWhen window={o.arrival_window} arriveBy={o.arrive_by} zone={o.time_zone} />
                    </span>
                  )}
                </span>
                <span class="row-side">
                  <span class="money">
                    {o.final_cost_cents !== null
                      ? money(o.final_cost_cents)
                      : typeof o.agreed_price_cents === "number"
                        ? `agreed ${money(o.agreed_price_cents)}`
                        : `est. ${money(o.estimated_cost_cents)}`}
                  </span>
                  {o.status === "en_route" && o.eta_at ? (
                    <span class="eta">ETA {clock(o.eta_at)}</span>
                  ) : (
                    <span class="muted">{ago(o.updated_at, at)}</span>
                  )}
                  <span class="row-id">{o.order_id}</span>
                  <button
                    type="button"
                    class="btn btn-quiet btn-small"
                    aria-expanded={expanded.value === o.order_id}
                    onClick={() => {
                      expanded.value = expanded.value === o.order_id ? null : o.order_id;
                    }}
                  >
                    Timeline
                  </button>
                </span>
              </div>
              {expanded.value === o.order_id && (
                <div class="account-timeline">
                  {rateable(o) && <OrderRating order={o} />}
                  <TrackingLinkPanel order={o} />
                  <ExcludeContractor order={o} />
                  <Proof order={o} />
                  <Timeline
                    path="/api/audit"
                    orderId={o.order_id}
                    version={o.updated_at}
                    zone={o.time_zone ?? null}
                  />
                </div>
              )}
              {counters.value.get(o.order_id) && (
                <CounterDecision
                  order={o}
                  counter={counters.value.get(o.order_id) as Counter}
                  onDecided={(after) => {
                    upsert([after]);
                    setCounter(o.order_id, after.counter);
                  }}
                />
              )}
              {asks.value.get(o.order_id) && (
                <NteDecision order={o} ask={asks.value.get(o.order_id) as NteAsk} />
              )}
            </li>
          ))}
        </ul>
      )}
      <NotificationsPanel />
    </section>
  );
}

function NteDecision({ order, ask }: { order: Order; ask: NteAsk }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inForce = order.nte_approved_cents ?? order.nte_cents;
  const decide = async (decision: "approve" | "reject") => {
    setBusy(true);
    setError(null);
    try {
      const decided = await post<Order>("/api/dispatch/v1/orders/nte-decision", {
        order_id: order.order_id,
        request_id: ask.request_id,
        decision,
      });
      upsert([decided]);
      setAsk(order.order_id, null);
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The decision did not go through; try again.");
      setBusy(false);
    }
  };
  return (
    <div class="nte-ask" data-nte-request-id={ask.request_id}>
      <p>
        <strong>NTE increase requested:</strong> {money(ask.requested_cents)}{" "}
        <span class="muted">(now {money(inForce)})</span>
        <br />
        <span class="nte-reason">{ask.reason}</span>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="nte-actions">
        <button type="button" class="btn btn-quiet" disabled={busy} onClick={() => void decide("reject")}>
          Reject
        </button>
        <button type="button" class="btn btn-primary" disabled={busy} onClick={() => void decide("approve")}>
          Approve
        </button>
      </div>
    </div>
  );
}
