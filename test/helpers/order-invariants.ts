// The work order's invariants, read from the database in one snapshot: what every sequence of commands,
// and every race between them, must leave behind. Returns the anomalies found (empty when all hold).
//
// - Each order's status and contractor agree with a replay of its audit records, and every record that
//   names the contractor the order had ("from") names the one the replay says it had.
// - An order has at most one pending offer, and while it is offered either one, to its contractor, or a
//   counter-offer of that contractor waiting on the account (never both, never either otherwise).
// - The capacity each contractor holds equals its pending offers and waiting counters plus the jobs it
//   holds, and the capacity ledger has exactly one row for each of them.
// - An order with a callback_url has one outbox event per status change, per NTE request or decision, and
//   per counter-offer event (a counter made, or one declined or expired that did not end the cascade;
//   none for a counter its account's policy accepted at once: that is the acceptance's status event).

import { sql, type Transaction } from "kysely";
import { openRecord } from "../../src/audit/redaction.js";
import { POLICY_ACTOR } from "../../src/domain/orders/counter-rules.js";
import { inSnapshot } from "../../src/storage/dialect.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import type { Database } from "../../src/storage/schema.js";
import type { Store } from "../../src/storage/store.js";

const HOLDING = new Set(["offered", "accepted", "en_route", "on_site"]);
/** Records whose change has a status event (a re-offer's order.offered has none). */
const STATUS_EVENT_KINDS = new Set([
  "order.matched",
  "order.unmatched",
  "order.accepted",
  "order.status_changed",
  "order.cancelled",
  "order.invoiced",
  "order.invoice_revised",
  "order.invoice_decided",
  "order.invoice_paid",
  "order.assigned",
  "order.needs_dispatcher",
  "order.counter_accepted",
]);
const COUNTER_EVENTS = new Set(["order.countered", "order.counter_declined", "order.counter_expired"]);

/** The counter-offer events an order's records call for (see the module's comment). */
function counterEventsOf(trail: ReadonlyArray<{ kind: string; actor: string }>): number {
  let n = 0;
  trail.forEach((t, i) => {
    const next = trail[i + 1];
    if (
      t.kind === "order.countered" &&
      !(next?.kind === "order.counter_accepted" && next.actor === POLICY_ACTOR)
    )
      n++;
    if (
      (t.kind === "order.counter_declined" || t.kind === "order.counter_expired") &&
      next?.kind !== "order.needs_dispatcher"
    )
      n++;
  });
  return n;
}

/** The order's status after each decision on its invoice. */
const INVOICE_DECIDED: Record<string, string> = {
  approved: "approved",
  rejected: "invoice_rejected",
  revision_requested: "revision_requested",
};

interface Replayed {
  status: string;
  contractor: string | null;
}

/** Replays one order's records; pushes what disagrees with itself. */
function replay(
  orderId: string,
  records: Array<{ kind: string; data: Record<string, unknown> }>,
  out: string[],
) {
  const r: Replayed = { status: "received", contractor: null };
  for (const { kind, data } of records) {
    switch (kind) {
      case "order.matched":
        r.status = "offered";
        r.contractor = data.chosen as string;
        break;
      case "order.unmatched":
      case "order.needs_dispatcher":
        r.status = "needs_dispatcher";
        r.contractor = null;
        break;
      case "order.offered":
        r.status = "offered";
        r.contractor = data.contractor_id as string;
        break;
      case "order.accepted":
        if (data.contractor_id !== r.contractor)
          out.push(`${orderId}: accepted by ${data.contractor_id} while offered to ${r.contractor}`);
        r.status = "accepted";
        break;
      case "order.assigned":
        if (data.from_contractor !== r.contractor)
          out.push(`${orderId}: assigned from ${data.from_contractor}, but it was with ${r.contractor}`);
        if (data.from_status !== r.status)
          out.push(`${orderId}: assigned from ${data.from_status}, but it was ${r.status}`);
        r.status = "accepted";
        r.contractor = data.to_contractor as string;
        break;
      case "order.status_changed":
        if (data.from !== r.status)
          out.push(`${orderId}: ${data.from} -> ${data.to}, but it was ${r.status}`);
        r.status = data.to as string;
        break;
      case "order.cancelled":
        if (data.from !== r.status)
          out.push(`${orderId}: cancelled from ${data.from}, but it was ${r.status}`);
        r.status = "cancelled";
        break;
      case "order.invoiced":
        if (r.status !== "completed") out.push(`${orderId}: invoiced while ${r.status}`);
        r.status = "invoiced";
        break;
      case "order.invoice_revised":
        if (!["invoiced", "revision_requested", "invoice_rejected"].includes(r.status))
          out.push(`${orderId}: invoice revised while ${r.status}`);
        r.status = "invoiced";
        break;
      case "order.invoice_decided":
        if (r.status !== "invoiced") out.push(`${orderId}: invoice decided while ${r.status}`);
        r.status = INVOICE_DECIDED[data.decision as string] ?? `unknown decision ${data.decision}`;
        break;
      case "order.invoice_paid":
        if (r.status !== "approved") out.push(`${orderId}: invoice paid while ${r.status}`);
        r.status = "paid";
        break;
      case "order.counter_accepted":
        if (data.contractor_id !== r.contractor || r.status !== "offered")
          out.push(
            `${orderId}: counter of ${data.contractor_id} accepted while ${r.status} to ${r.contractor}`,
          );
        r.status = "accepted";
        break;
      case "order.countered":
      case "order.counter_declined":
      case "order.counter_expired":
      case "order.offer_declined":
      case "order.offer_expired":
        // An offer is pending only while its order is offered.
        if (r.status !== "offered") out.push(`${orderId}: ${kind} while ${r.status}`);
        break;
      case "order.nte_decided":
        if (!["accepted", "en_route", "on_site", "completed"].includes(r.status))
          out.push(`${orderId}: NTE decided while ${r.status}`);
        break;
    }
  }
  return r;
}

export function orderAnomalies(store: Store): Promise<string[]> {
  const { db, dialect } = store as KyselyStore;
  // Every read in one snapshot: a change committed between two of them would show as an anomaly that is
  // not there. Servers sharing the store commit on their own too (the maintenance generator places the
  // sandbox's planned orders): an order placed after `orders` was read had its ledger row read later,
  // "a row in the capacity ledger for nothing held" and "counter 0, ledger 1" for an order that held it.
  return inSnapshot(db, dialect, anomaliesIn);
}

async function anomaliesIn(db: Transaction<Database>): Promise<string[]> {
  const out: string[] = [];
  const orders = await db
    .selectFrom("orders")
    .select(["id", "status", "contractor_id", "callback_url"])
    .execute();
  const records = await db
    .selectFrom("audit_records")
    .select(["order_id", "kind", "record", "disclosures", "actor"])
    .where("order_id", "is not", null)
    .orderBy("seq")
    .execute();
  const byOrder = new Map<string, Array<{ kind: string; actor: string; data: Record<string, unknown> }>>();
  for (const row of records) {
    const list = byOrder.get(row.order_id as string) ?? [];
    list.push({ kind: row.kind, actor: row.actor, data: openRecord(row).data });
    byOrder.set(row.order_id as string, list);
  }
  const offers = await db.selectFrom("offers").select(["order_id", "contractor_id", "status"]).execute();
  const counters = await db
    .selectFrom("counter_offers")
    .select(["order_id", "contractor_id"])
    .where("status", "=", "pending")
    .execute();
  const events = await db.selectFrom("webhook_events").select(["order_id", "type"]).execute();
  for (const order of orders) {
    const trail = byOrder.get(order.id) ?? [];
    const r = replay(order.id, trail, out);
    if (r.status !== order.status)
      out.push(`${order.id}: stored ${order.status}, its records say ${r.status}`);
    if (HOLDING.has(order.status) && r.contractor !== order.contractor_id) {
      out.push(`${order.id}: held by ${order.contractor_id}, its records say ${r.contractor}`);
    }
    const pending = offers.filter((o) => o.order_id === order.id && o.status === "pending");
    const waiting = counters.filter((c) => c.order_id === order.id);
    if (pending.length + waiting.length > 1)
      out.push(`${order.id}: ${pending.length} pending offers, ${waiting.length} waiting counters`);
    if (order.status === "offered") {
      const to = pending[0]?.contractor_id ?? waiting[0]?.contractor_id;
      if (to !== order.contractor_id)
        out.push(`${order.id}: offered to ${order.contractor_id}, pending offer or counter of ${to}`);
    } else if (pending.length + waiting.length > 0) {
      out.push(`${order.id}: a pending offer or a waiting counter while ${order.status}`);
    }
    if (order.callback_url !== null) {
      const mine = events.filter((e) => e.order_id === order.id);
      const statusChanges = trail.filter((t) => STATUS_EVENT_KINDS.has(t.kind)).length;
      const statusEvents = mine.filter(
        (e) => !e.type.startsWith("order.nte_") && !COUNTER_EVENTS.has(e.type),
      ).length;
      const counterEvents = mine.filter((e) => COUNTER_EVENTS.has(e.type)).length;
      if (counterEvents !== counterEventsOf(trail))
        out.push(`${order.id}: ${counterEvents} counter events for ${counterEventsOf(trail)} expected`);
      if (statusEvents !== statusChanges)
        out.push(`${order.id}: ${statusEvents} status events for ${statusChanges} status changes`);
      const nteRecords = trail.filter(
        (t) => t.kind === "order.nte_requested" || t.kind === "order.nte_decided",
      );
      const nteEvents = mine.filter((e) => e.type.startsWith("order.nte_")).length;
      if (nteEvents !== nteRecords.length)
        out.push(`${order.id}: ${nteEvents} NTE events for ${nteRecords.length} NTE records`);
    }
  }
  const held = await sql<{ id: string; active_jobs: number; offers: number; jobs: number }>`
    select c.id, c.active_jobs,
      (select count(*) from offers o where o.contractor_id = c.id and o.status = 'pending')
        + (select count(*) from counter_offers k where k.contractor_id = c.id and k.status = 'pending') as offers,
      (select count(*) from orders d where d.contractor_id = c.id
         and d.status in ('accepted', 'en_route', 'on_site')) as jobs
    from contractors c`.execute(db);
  for (const c of held.rows) {
    if (Number(c.active_jobs) !== Number(c.offers) + Number(c.jobs)) {
      out.push(
        `${c.id}: holds ${c.active_jobs}, has ${c.offers} pending offers or counters and ${c.jobs} jobs`,
      );
    }
  }
  // The ledger: one hold per pending offer and per job, and the counter moves with it.
  const holds = await db.selectFrom("capacity_holds").select(["order_id", "contractor_id"]).execute();
  const want = new Set([
    ...offers.filter((o) => o.status === "pending").map((o) => `${o.order_id}|${o.contractor_id}`),
    ...counters.map((c) => `${c.order_id}|${c.contractor_id}`),
    ...orders
      .filter((o) => o.contractor_id !== null && ["accepted", "en_route", "on_site"].includes(o.status))
      .map((o) => `${o.id}|${o.contractor_id}`),
  ]);
  const have = new Set(holds.map((h) => `${h.order_id}|${h.contractor_id}`));
  for (const w of want) if (!have.has(w)) out.push(`${w}: held, but no row in the capacity ledger`);
  for (const h of have) if (!want.has(h)) out.push(`${h}: a row in the capacity ledger for nothing held`);
  const counts = new Map<string, number>();
  for (const h of holds) counts.set(h.contractor_id, (counts.get(h.contractor_id) ?? 0) + 1);
  for (const c of held.rows) {
    if ((counts.get(c.id) ?? 0) !== Number(c.active_jobs)) {
      out.push(`${c.id}: counter ${c.active_jobs}, ledger ${counts.get(c.id) ?? 0}`);
    }
  }
  return out;
}
