// The account's orders, newest first, with their status kept live by the event stream.

import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { ApiProblem, allPages } from "../api";
import { ago, clock, minute, money, place, titleCase } from "../format";
import { subscribe } from "../live";
import type { Order, OrderStatus, StreamEvent } from "../types";
import { StatusPill } from "./status";

const orders = signal<Map<string, Order>>(new Map());
const loading = signal(true);
const loadError = signal<string | null>(null);

const OPEN = new Set<OrderStatus>([
  "received",
  "offered",
  "accepted",
  "en_route",
  "on_site",
  "needs_dispatcher",
]);

function upsert(list: Order[]) {
  const next = new Map(orders.value);
  for (const o of list) {
    const held = next.get(o.order_id);
    if (!held || held.updated_at <= o.updated_at) next.set(o.order_id, o);
  }
  orders.value = next;
}

function onEvent(event: StreamEvent) {
  const order = event.data.order as Order | undefined;
  if (order?.order_id) upsert([order]);
}

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    upsert(await allPages<Order, "orders">("/api/dispatch/v1/orders", "orders", { limit: 100 }, 3));
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
                    {o.reference_id && <span class="ref">{o.reference_id}</span>}
                  </span>
                  <span class="row-desc">{o.description}</span>
                  <span class="row-detail">{o.status_detail}</span>
                </span>
                <span class="row-side">
                  <span class="money">
                    {o.final_cost_cents !== null
                      ? money(o.final_cost_cents)
                      : `est. ${money(o.estimated_cost_cents)}`}
                  </span>
                  {o.status === "en_route" && o.eta_at ? (
                    <span class="eta">ETA {clock(o.eta_at)}</span>
                  ) : (
                    <span class="muted">{ago(o.updated_at, at)}</span>
                  )}
                  <span class="row-id">{o.order_id}</span>
                </span>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
