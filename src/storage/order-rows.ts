// The work order's rows and the domain's values (domain/orders/order.ts), mapped in this one place: an
// order's livemode is 0/1 and its ranking JSON text in its row, a boolean and an array in the domain; an
// offer's livemode likewise. Every other column is stored as the domain holds it (ISO-8601 UTC text for
// times, integer cents), and an NTE request's row is the domain's NteRequest as it is.
//
// Each read maps a row once (the ranking parsed once); each write maps once (the ranking serialised once).
// The event log keeps the order in its payload in the row's form (operations/orders/event-log.ts), so
// that payloads written by earlier versions, with livemode 0/1, read the same as new ones.

import type { Selectable, Updateable } from "kysely";
import type { Offer, Order, OrderPatch } from "../domain/orders/order.js";
import type { SiteCheck } from "../domain/orders/site-check.js";
import type { OffersTable, OrdersTable } from "./schema.js";

export type OrderRow = Selectable<OrdersTable>;
export type OfferRow = Selectable<OffersTable>;

// The row and the order have the same columns: one added to either and not the other fails to compile.
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
const sameColumns: SameKeys<OrdersTable, Order> & SameKeys<OffersTable, Offer> = true;
void sameColumns;

/** The ranking's JSON text as the domain reads it: contractor ids, best first ([] if unreadable). */
function rankingOf(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const ids: unknown = JSON.parse(text);
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

/** A check-in's JSON text as the domain reads it (null when absent or unreadable). */
function checkOf(text: string | null | undefined): SiteCheck | null {
  if (!text) return null;
  try {
    const check: unknown = JSON.parse(text);
    return check && typeof check === "object" ? (check as SiteCheck) : null;
  } catch {
    return null;
  }
}

const checkText = (check: SiteCheck | null) => (check === null ? null : JSON.stringify(check));

/** An order as read from its row. */
export function orderFromRow(row: OrderRow): Order {
  return {
    ...row,
    livemode: row.livemode === 1,
    ranking: rankingOf(row.ranking),
    check_in: checkOf(row.check_in),
    check_out: checkOf(row.check_out),
  };
}

/** An order's row, every column stated (a new order's insert, and fixtures'). */
export function orderToRow(order: Order): OrderRow {
  return {
    ...order,
    livemode: order.livemode ? 1 : 0,
    ranking: order.ranking === null ? null : JSON.stringify(order.ranking),
    check_in: checkText(order.check_in),
    check_out: checkText(order.check_out),
  };
}

/** The columns a change of an existing order sets, with its next version: the conditional update's SET.
 * A patch never names livemode or the ranking (OrderPatch); the checks are JSON text; every other column
 * it names is stored as is. */
export function orderPatchToRow(patch: OrderPatch, version: number): Updateable<OrdersTable> {
  const { check_in, check_out, ...rest } = patch;
  return {
    ...rest,
    ...(check_in !== undefined ? { check_in: checkText(check_in) } : {}),
    ...(check_out !== undefined ? { check_out: checkText(check_out) } : {}),
    version,
  };
}

export function offerFromRow(row: OfferRow): Offer {
  return { ...row, livemode: row.livemode === 1 };
}

export function offerToRow(offer: Offer): OfferRow {
  return { ...offer, livemode: offer.livemode ? 1 : 0 };
}

// --- The event log's copy of an order -----------------------------------------------------------------

/** Columns an order in an event payload may lack: added after the event log (migrations 0017, 0020), or
 * left out of a new order's row by versions that let the columns' defaults stand; 0037). */
type LateColumn =
  | "on_site_at"
  | "override_count"
  | "version"
  | "time_zone"
  | "window_start"
  | "window_end"
  | "window_source"
  | "respond_by"
  | "arrive_by"
  | "sla_respond_at_risk_at"
  | "sla_respond_breached_at"
  | "sla_arrive_at_risk_at"
  | "sla_arrive_breached_at"
  | "check_in"
  | "check_out"
  | "recall_of"
  | "agreed_price_cents";

/** An order as an event payload keeps it: its row without the ranking (internal, and the bulk of it), its
 * checks as the domain's objects (the payload is JSON already). */
export type LoggedOrderRow = Omit<OrderRow, "ranking" | LateColumn> &
  Partial<Pick<OrderRow, Exclude<LateColumn, "check_in" | "check_out">>> &
  Partial<Pick<Order, "check_in" | "check_out">> & {
    /** Never stored: JSON.stringify leaves out a member whose value is undefined. */
    ranking?: undefined;
  };

const LATE_DEFAULTS: Pick<Order, LateColumn> = {
  on_site_at: null,
  override_count: 0,
  version: 0,
  time_zone: null,
  window_start: null,
  window_end: null,
  window_source: null,
  respond_by: null,
  arrive_by: null,
  sla_respond_at_risk_at: null,
  sla_respond_breached_at: null,
  sla_arrive_at_risk_at: null,
  sla_arrive_breached_at: null,
  check_in: null,
  check_out: null,
  recall_of: null,
  agreed_price_cents: null,
};

/** The order as an event payload keeps it. */
export function loggedOrderRow(order: Order): LoggedOrderRow {
  return { ...order, livemode: order.livemode ? 1 : 0, ranking: undefined };
}

/** The order an event payload kept (of any version), without its ranking. */
export function orderFromLogged(row: LoggedOrderRow): Order {
  return { ...LATE_DEFAULTS, ...row, livemode: row.livemode === 1, ranking: null };
}
