// Reading work orders, their offers and NTE requests: by id (inside a command's write, locked), by
// account and mode page by page, and the queues the sweeper, the sandbox and contractors read. Orders
// change only through the one writer (order-writer.ts). Orders and offers are returned as the domain's
// values, mapped from their rows by order-rows.ts.

import { type Kysely, type Selectable, sql } from "kysely";
import type { InvoiceDecision, InvoiceLine, InvoiceVersion } from "../domain/orders/invoice.js";
import type { NteRequest, Offer, OfferStatus, Order } from "../domain/orders/order.js";
import { OPEN_ORDERS_SQL } from "../domain/orders/sla-clocks.js";
import type { OrderStatus } from "../domain/orders/transitions.js";
import type { Dialect } from "./dialect.js";
import { type OfferRow, type OrderRow, offerFromRow, orderFromRow } from "./order-rows.js";
import type { Database, InvoiceDecisionsTable, InvoiceVersionsTable } from "./schema.js";
import type {
  ExportQuery,
  HeldTime,
  OrderQuery,
  OrderStore,
  ScheduledCursor,
  ScheduledOrder,
  WriteTx,
} from "./store.js";
import { trxOf } from "./write-tx.js";

/** The orders the optimised day plans (not yet on site): the predicate of orders_schedule_idx (migration
 * 0025), as literal text identical to it. */
const SCHEDULED_ORDERS_SQL = "status in ('needs_dispatcher', 'offered', 'accepted', 'en_route')";

/** The statuses of orders_status_idx (migration 0047): all but the four that accumulate with the years
 * (completed, approved, paid, cancelled), as literal text identical to its predicate. */
const BOARD_STATUSES_SQL = "status not in ('completed', 'approved', 'paid', 'cancelled')";
const NOT_BOARD_STATUSES: ReadonlySet<string> = new Set(["completed", "approved", "paid", "cancelled"]);

/** The columns of the optimised day's orders (store.ts ScheduledOrder). */
const SCHEDULED_COLUMNS = [
  "id",
  "account_id",
  "status",
  "created_at",
  "version",
  "contractor_id",
  "trade",
  "state",
  "zip",
  "city",
  "time_zone",
  "window_start",
  "window_end",
  "arrive_by",
  "received_at",
] as const;

/**
 * A page of the optimised day's orders on `db` (store.ts scheduledPage): also run by the day planner's
 * thread on a read connection of its own (day-reader.ts).
 */
export function scheduledPageOf(
  db: Kysely<Database>,
  livemode: boolean,
  state: string | undefined,
  after: ScheduledCursor | null,
  limit: number,
): Promise<ScheduledOrder[]> {
  // After the cursor: (state, status, id) after the cursor's, and with a state no later state, which
  // SQLite reads as one range of orders_schedule_idx in its order (with `state = ?` beside the row
  // value, it would walk the state's entries by status from the first instead).
  let query = db
    .selectFrom("orders")
    .select(SCHEDULED_COLUMNS)
    .where(sql<boolean>`${sql.raw(SCHEDULED_ORDERS_SQL)}`)
    .where("livemode", "=", livemode ? 1 : 0);
  if (after === null) {
    if (state !== undefined) query = query.where("state", "=", state);
  } else {
    query = query.where((eb) =>
      eb(
        eb.refTuple("state", "status", "id"),
        ">",
        eb.tuple(after.state, after.status as OrderStatus, after.id),
      ),
    );
    if (state !== undefined) query = query.where("state", "<=", state);
  }
  return query.orderBy("state").orderBy("status").orderBy("id").limit(limit).execute();
}

function versionFromRow(r: Selectable<InvoiceVersionsTable>): InvoiceVersion {
  return {
    ...r,
    version: Number(r.version),
    subtotal_cents: Number(r.subtotal_cents),
    tax_cents: Number(r.tax_cents),
    total_cents: Number(r.total_cents),
    lines: JSON.parse(r.lines) as InvoiceLine[],
  };
}

function decisionFromRow(r: Selectable<InvoiceDecisionsTable>): InvoiceDecision {
  return {
    ...r,
    version: Number(r.version),
    total_cents: Number(r.total_cents),
    decision: r.decision as InvoiceDecision["decision"],
    reason_code: r.reason_code as InvoiceDecision["reason_code"],
  };
}

const oneOrder = (row: OrderRow | undefined) => (row === undefined ? undefined : orderFromRow(row));
const toOrders = (rows: OrderRow[]) => rows.map(orderFromRow);
const oneOffer = (row: OfferRow | undefined) => (row === undefined ? undefined : offerFromRow(row));
const toOffers = (rows: OfferRow[]) => rows.map(offerFromRow);

/** An unrevoked key of the contractor in `column`: a contractor with one plays its own part in the
 * sandbox, so the simulator leaves it alone. Read from the store at each round, so every process agrees
 * as soon as the key is issued (served by api_keys_contractor_idx, migration 0013). */
function keyOfContractor(db: Kysely<Database>, column: "offers.contractor_id" | "orders.contractor_id") {
  return db
    .selectFrom("api_keys")
    .select("api_keys.id")
    .where("api_keys.contractor_id", "=", sql.ref<string>(column))
    .where("api_keys.kind", "=", "contractor")
    .where("api_keys.revoked_at", "is", null);
}

export class KyselyOrderStore implements OrderStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** An order; with `lock` inside a write, locked until COMMIT where the store has row locks
   * (PostgreSQL: the command then decides on a state nobody can change before it is written; SQLite has
   * one writer, and a transaction sees no other). */
  byId(id: string, tx?: WriteTx, lock = false): Promise<Order | undefined> {
    const query = trxOf(tx, this.db).selectFrom("orders").selectAll().where("id", "=", id);
    return (lock && tx && this.dialect === "postgres" ? query.forUpdate() : query)
      .executeTakeFirst()
      .then(oneOrder);
  }

  offerById(id: string, tx?: WriteTx): Promise<Offer | undefined> {
    return trxOf(tx, this.db)
      .selectFrom("offers")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst()
      .then(oneOffer);
  }

  /** An order's offers, first attempt first. */
  offersOf(orderId: string, tx?: WriteTx): Promise<Offer[]> {
    return trxOf(tx, this.db)
      .selectFrom("offers")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("attempt")
      .execute()
      .then(toOffers);
  }

  pendingOffersOf(orderIds: string[]): Promise<Offer[]> {
    if (orderIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("order_id", "in", orderIds)
      .where("status", "=", "pending")
      .execute()
      .then(toOffers);
  }

  async heldTimes(orderIds: string[]): Promise<HeldTime[]> {
    if (orderIds.length === 0) return [];
    // Served by the ledger's primary key (order_id, contractor_id).
    const rows = await this.db
      .selectFrom("capacity_holds")
      .select(["order_id", "contractor_id", "starts_at", "ends_at"])
      .where("order_id", "in", orderIds)
      .where("starts_at", "is not", null)
      .execute();
    return rows.flatMap((r) =>
      r.starts_at && r.ends_at
        ? [
            {
              orderId: r.order_id,
              contractorId: r.contractor_id,
              start: new Date(r.starts_at).toISOString(),
              end: new Date(r.ends_at).toISOString(),
            },
          ]
        : [],
    );
  }

  nteRequestById(id: string, tx?: WriteTx): Promise<NteRequest | undefined> {
    return trxOf(tx, this.db).selectFrom("nte_requests").selectAll().where("id", "=", id).executeTakeFirst();
  }

  find(id: string, accountId: string, livemode: boolean): Promise<Order | undefined> {
    return this.db
      .selectFrom("orders")
      .selectAll()
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst()
      .then(oneOrder);
  }

  scheduledOrders(livemode: boolean, state: string | undefined, limit: number): Promise<Order[]> {
    // Served by orders_schedule_idx (livemode, state, status, partial: SCHEDULED_ORDERS_SQL), or in the
    // test mode without a state by orders_sandbox_idx (livemode, status): no ORDER BY, which
    // orders_evals_idx would serve by walking every order of the mode.
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where(sql<boolean>`${sql.raw(SCHEDULED_ORDERS_SQL)}`)
      .where("livemode", "=", livemode ? 1 : 0);
    if (state !== undefined) query = query.where("state", "=", state);
    return query.limit(limit).execute().then(toOrders);
  }

  scheduledPage(
    livemode: boolean,
    state: string | undefined,
    after: ScheduledCursor | null,
    limit: number,
  ): Promise<ScheduledOrder[]> {
    return scheduledPageOf(this.db, livemode, state, after, limit);
  }

  slaWatched(after: string | null, limit: number): Promise<Order[]> {
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where(sql<boolean>`${sql.raw(OPEN_ORDERS_SQL)}`)
      .where((eb) =>
        eb.or([
          eb.and([eb("respond_by", "is not", null), eb("sla_respond_breached_at", "is", null)]),
          eb.and([
            eb.or([eb("arrive_by", "is not", null), eb("window_end", "is not", null)]),
            eb("sla_arrive_breached_at", "is", null),
          ]),
        ]),
      );
    if (after !== null) query = query.where("id", ">", after);
    return query.orderBy("id").limit(limit).execute().then(toOrders);
  }

  dueOffers(now: string, limit: number): Promise<Offer[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("status", "=", "pending")
      .where("deadline_at", "<=", now)
      .orderBy("deadline_at")
      .limit(limit)
      .execute()
      .then(toOffers);
  }

  sandboxOffers(cutoff: string, limit: number): Promise<Offer[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("status", "=", "pending")
      .where("livemode", "=", 0)
      .where("offered_at", "<=", cutoff)
      .where(({ not, exists }) => not(exists(keyOfContractor(this.db, "offers.contractor_id"))))
      .orderBy("offered_at")
      .limit(limit)
      .execute()
      .then(toOffers);
  }

  // `livemode = 0` as text, the partial index's own predicate (orders_sandbox_idx, migration 0024): a
  // bound 0 would not match it.
  sandboxOrdersIn(
    statuses: readonly OrderStatus[],
    cutoff: string,
    limit: number,
    windowsStartedBy?: string,
  ): Promise<Order[]> {
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where(sql<boolean>`livemode = 0`)
      .where("status", "in", statuses)
      .where("updated_at", "<=", cutoff);
    if (windowsStartedBy !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb("status", "<>", "accepted"),
          eb("window_start", "is", null),
          eb("window_start", "<=", windowsStartedBy),
        ]),
      );
    }
    return query
      .where(({ not, exists }) => not(exists(keyOfContractor(this.db, "orders.contractor_id"))))
      .orderBy("updated_at")
      .limit(limit)
      .execute()
      .then(toOrders);
  }

  offersOfContractor(
    contractorId: string,
    livemode: boolean,
    status: OfferStatus,
    limit: number,
  ): Promise<Offer[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("contractor_id", "=", contractorId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("status", "=", status)
      .orderBy("offered_at", "desc")
      .limit(limit)
      .execute()
      .then(toOffers);
  }

  ordersOfContractor(
    contractorId: string,
    livemode: boolean,
    statuses: readonly OrderStatus[],
    limit: number,
  ): Promise<Order[]> {
    return this.db
      .selectFrom("orders")
      .selectAll()
      .where("contractor_id", "=", contractorId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("status", "in", statuses)
      .orderBy("created_at", "desc")
      .limit(limit)
      .execute()
      .then(toOrders);
  }

  /** An order's NTE requests, oldest first. */
  nteRequests(orderId: string, tx?: WriteTx): Promise<NteRequest[]> {
    return trxOf(tx, this.db)
      .selectFrom("nte_requests")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at")
      .execute();
  }

  /** Every version of an order's itemised invoice, oldest first. */
  async invoiceVersions(orderId: string, tx?: WriteTx): Promise<InvoiceVersion[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("invoice_versions")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("version")
      .execute();
    return rows.map(versionFromRow);
  }

  /** The account's decisions on the order's invoice, oldest first. */
  async invoiceDecisions(orderId: string, tx?: WriteTx): Promise<InvoiceDecision[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("invoice_decisions")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("decided_at")
      .orderBy("id")
      .execute();
    return rows.map(decisionFromRow);
  }

  async invoiceVersionsOf(orderIds: readonly string[]): Promise<InvoiceVersion[]> {
    if (orderIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("invoice_versions")
      .selectAll()
      .where("order_id", "in", orderIds)
      .orderBy("order_id")
      .orderBy("version")
      .execute();
    return rows.map(versionFromRow);
  }

  async invoiceDecisionsOf(orderIds: readonly string[]): Promise<InvoiceDecision[]> {
    if (orderIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("invoice_decisions")
      .selectAll()
      .where("order_id", "in", orderIds)
      .orderBy("order_id")
      .orderBy("decided_at")
      .orderBy("id")
      .execute();
    return rows.map(decisionFromRow);
  }

  exportPage(q: ExportQuery): Promise<Order[]> {
    const by = q.by;
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where("livemode", "=", q.livemode ? 1 : 0)
      .where(by, ">=", q.from)
      .where(by, "<", q.to);
    if (q.accountId !== undefined) query = query.where("account_id", "=", q.accountId);
    if (q.statuses !== undefined) query = query.where("status", "in", q.statuses);
    const after = q.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([eb(by, ">", after.at), eb.and([eb(by, "=", after.at), eb("id", ">", after.id)])]),
      );
    }
    // created_at: a range of orders_account_idx (account_id, livemode, created_at) or orders_evals_idx
    // (livemode, created_at); invoiced_at: orders_account_invoiced_idx or
    // orders_invoiced_idx (migration 0040), partial: `invoiced_at >= from` implies their predicate.
    return query.orderBy(by).orderBy("id").limit(q.limit).execute().then(toOrders);
  }

  byIds(ids: string[], tx?: WriteTx, lock = false): Promise<Order[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const query = trxOf(tx, this.db).selectFrom("orders").selectAll().where("id", "in", ids);
    return (lock && tx && this.dialect === "postgres" ? query.forUpdate() : query).execute().then(toOrders);
  }

  list(q: OrderQuery): Promise<Order[]> {
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where("livemode", "=", q.livemode ? 1 : 0);
    if (q.accountId !== undefined) query = query.where("account_id", "=", q.accountId);
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    // The dispatch team's list of a status in flight: a range of orders_status_idx (livemode, status,
    // created_at, id; partial, its predicate stated as text so that SQLite uses it). An account's keeps
    // orders_account_idx; the four accumulating statuses find their page near the newest orders.
    if (q.accountId === undefined && q.status !== undefined && !NOT_BOARD_STATUSES.has(q.status))
      query = query.where(sql<boolean>`${sql.raw(BOARD_STATUSES_SQL)}`);
    if (q.referenceId !== undefined) query = query.where("reference_id", "=", q.referenceId);
    if (q.recallOf !== undefined) query = query.where("recall_of", "=", q.recallOf);
    if (q.since !== undefined) query = query.where("created_at", ">=", q.since);
    if (q.until !== undefined) query = query.where("created_at", "<", q.until);
    const before = q.before;
    if (before) {
      query = query.where((eb) =>
        eb.or([
          eb("created_at", "<", before.createdAt),
          eb.and([eb("created_at", "=", before.createdAt), eb("id", "<", before.id)]),
        ]),
      );
    }
    // Otherwise served by orders_account_idx (account_id, livemode, created_at) or orders_evals_idx.
    return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(q.limit).execute().then(toOrders);
  }
}
