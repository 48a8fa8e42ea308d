// Webhooks' persistence, shared by both dialects: signing secrets, endpoints, the outbox's fan-out into
// deliveries, claiming due deliveries under a lease, recording attempts, the delivery log, redelivery and
// retention. The outbox rows are written by the write transaction of the change they report
// (storage/order-writer.ts, through writeEvents here).

import { CompiledQuery, type Kysely, sql, type Transaction } from "kysely";
import { newSortableId } from "../ids.js";
import type { Dialect } from "./dialect.js";
import { PreparedInsert } from "./prepared-insert.js";
import type { PurgeableTable, PurgedBatch } from "./retention.js";
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryStatus,
  WebhookEndpointsTable,
  WebhookEventsTable,
  WebhookSecretsTable,
} from "./schema.js";

/** A delivery a worker holds: what it needs to send, and its claim token (the attempt number). */
export interface ClaimedDelivery {
  delivery: WebhookDeliveriesTable;
  event: Pick<WebhookEventsTable, "id" | "type" | "payload" | "created_at">;
  endpoint: Pick<WebhookEndpointsTable, "id" | "url" | "status">;
}

export interface AttemptResult {
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  outcome: "succeeded" | "retrying" | "failed" | "cancelled";
  nextAttemptAt: string | null;
  /** Set on 410 Gone: the endpoint is disabled, with this reason, in the same transaction. */
  disableEndpoint?: string;
}

export interface DeliveryQuery {
  accountId: string;
  livemode: boolean;
  endpointId?: string | undefined;
  status?: WebhookDeliveryStatus | undefined;
  orderId?: string | undefined;
  deliveryId?: string | undefined;
  /** Keyset cursor: deliveries older than this id (newest first). */
  before?: string | undefined;
  limit: number;
}

export type DeliveryRow = WebhookDeliveriesTable & {
  event_type: string;
  order_id: string;
  event_created_at: string;
  url: string;
};

/** An account's endpoint for a URL, in a mode (unique). */
function endpointByUrl(
  trx: Transaction<Database>,
  accountId: string,
  livemode: number,
  url: string,
): Promise<WebhookEndpointsTable> {
  return trx
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("livemode", "=", livemode)
    .where("url", "=", url)
    .executeTakeFirstOrThrow();
}

/** Webhooks' persistence as the operations, the CLI and the dispatcher use it. */
export interface WebhookPersistence extends PurgeableTable {
  /** Makes `row` the account's current secret; the previous one signs until `overlapUntil`. */
  rotateSecret(row: WebhookSecretsTable, overlapUntil: string): Promise<WebhookSecretsTable[]>;
  /** The secrets that sign at `now`, newest first. */
  signingSecrets(accountId: string, livemode: boolean, now: string): Promise<WebhookSecretsTable[]>;
  /** Sets (or, with null, removes) the account's default endpoint in a mode. */
  setDefaultEndpoint(
    accountId: string,
    livemode: boolean,
    url: string | null,
    now: string,
  ): Promise<WebhookEndpointsTable | undefined>;
  listEndpoints(accountId: string, livemode: boolean): Promise<WebhookEndpointsTable[]>;
  endpointById(id: string): Promise<WebhookEndpointsTable | undefined>;
  enableEndpoint(id: string, now: string): Promise<boolean>;
  /** Turns up to `limit` outbox events into deliveries; returns how many events it fanned out. */
  fanOut(limit: number, now: string): Promise<number>;
  /** Claims due deliveries under a lease until `leaseUntil`. */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]>;
  recordAttempt(delivery: WebhookDeliveriesTable, attempt: number, result: AttemptResult): Promise<void>;
  listDeliveries(q: DeliveryQuery): Promise<DeliveryRow[]>;
  attemptsOf(deliveryIds: string[]): Promise<WebhookAttemptsTable[]>;
  deliveryById(id: string): Promise<WebhookDeliveriesTable | undefined>;
  redeliver(filter: { ids: string[] } | { endpointId: string; since: string }, now: string): Promise<number>;
  eventsOfOrder(orderId: string): Promise<WebhookEventsTable[]>;
}

export class WebhookStore implements WebhookPersistence {
  private readonly events: PreparedInsert<"webhook_events">;
  private defaultEndpointSql: string | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {
    this.events = new PreparedInsert("webhook_events", dialect);
  }

  // --- The outbox ------------------------------------------------------------------------------------

  /** Writes outbox events in the transaction of the changes they report (whether an event has a
   * recipient is decided before: webhooks/outbox.ts). */
  async writeEvents(trx: Transaction<Database>, rows: WebhookEventsTable[]): Promise<void> {
    await this.events.run(trx, rows);
  }

  /** Whether an account has a default endpoint in a mode (enabled or not), as it is in `trx`. */
  async hasDefaultEndpoint(
    trx: Transaction<Database>,
    accountId: string,
    livemode: number,
  ): Promise<boolean> {
    // Compiled once: asked in every order's transaction (once per account and mode).
    this.defaultEndpointSql ??= sql`select id from webhook_endpoints
      where account_id = ${""} and livemode = ${0} and is_default = 1
      limit 1`.compile(this.db).sql;
    const found = await trx.executeQuery(CompiledQuery.raw(this.defaultEndpointSql, [accountId, livemode]));
    return found.rows.length > 0;
  }

  // --- Signing secrets -------------------------------------------------------------------------------

  /**
   * Makes `secret` the account's current secret. The previous current one keeps signing until
   * `overlapUntil` (now for no overlap); older ones keep their own end. Returns the secrets still valid.
   */
  async rotateSecret(row: WebhookSecretsTable, overlapUntil: string): Promise<WebhookSecretsTable[]> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("webhook_secrets")
        .set({ expires_at: overlapUntil })
        .where("account_id", "=", row.account_id)
        .where("livemode", "=", row.livemode)
        .where("expires_at", "is", null)
        .execute();
      await trx.insertInto("webhook_secrets").values(row).execute();
      return this.secretsIn(trx, row.account_id, row.livemode === 1, row.created_at);
    });
  }

  /** The secrets that sign at `now`: the current one and those still in their overlap, newest first. */
  signingSecrets(accountId: string, livemode: boolean, now: string): Promise<WebhookSecretsTable[]> {
    return this.secretsIn(this.db, accountId, livemode, now);
  }

  private secretsIn(
    db: Kysely<Database> | Transaction<Database>,
    accountId: string,
    livemode: boolean,
    now: string,
  ): Promise<WebhookSecretsTable[]> {
    return db
      .selectFrom("webhook_secrets")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute();
  }

  // --- Endpoints -------------------------------------------------------------------------------------

  /** Sets (enabled) or clears the account's default endpoint; returns it, or undefined when cleared. */
  async setDefaultEndpoint(
    accountId: string,
    livemode: boolean,
    url: string | null,
    now: string,
  ): Promise<WebhookEndpointsTable | undefined> {
    const mode = livemode ? 1 : 0;
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("webhook_endpoints")
        .set({ is_default: 0, updated_at: now })
        .where("account_id", "=", accountId)
        .where("livemode", "=", mode)
        .where("is_default", "=", 1)
        .execute();
      if (url === null) return undefined;
      await trx
        .insertInto("webhook_endpoints")
        .values({
          id: newSortableId("whe"),
          account_id: accountId,
          livemode: mode,
          url,
          is_default: 1,
          status: "enabled",
          disabled_reason: null,
          disabled_at: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(["account_id", "livemode", "url"]).doUpdateSet({
            is_default: 1,
            status: "enabled",
            disabled_reason: null,
            disabled_at: null,
            updated_at: now,
          }),
        )
        .execute();
      return endpointByUrl(trx, accountId, mode, url);
    });
  }

  listEndpoints(accountId: string, livemode: boolean): Promise<WebhookEndpointsTable[]> {
    return this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .orderBy("is_default", "desc")
      .orderBy("id")
      .execute();
  }

  endpointById(id: string): Promise<WebhookEndpointsTable | undefined> {
    return this.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /** Enables a disabled endpoint; false if it was enabled already. */
  async enableEndpoint(id: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_endpoints")
      .set({ status: "enabled", disabled_reason: null, disabled_at: null, updated_at: now })
      .where("id", "=", id)
      .where("status", "=", "disabled")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  // --- Fan-out: events -> deliveries ------------------------------------------------------------------

  /**
   * Turns up to `limit` new events into deliveries, one per endpoint: the account's default endpoint
   * and the order's callback_url (a URL that is both gets one delivery). An event with no endpoint is
   * done. Deliveries to a disabled endpoint are written cancelled, so the log shows them and they can be
   * redelivered once the endpoint is enabled again. Idempotent: deliveries are unique per (event,
   * endpoint), so two processes fanning out the same event write each delivery once. Returns how many
   * events it handled.
   */
  async fanOut(limit: number, now: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom("webhook_events")
        .select(["id", "account_id", "livemode", "callback_url"])
        .where("fanned_out", "=", 0)
        .orderBy("id")
        .limit(limit);
      if (this.dialect === "postgres") q = q.forUpdate().skipLocked();
      const events = await q.execute();
      if (events.length === 0) return 0;
      const defaults = new Map<string, WebhookEndpointsTable | null>();
      for (const event of events) {
        const scope = `${event.account_id}|${event.livemode}`;
        if (!defaults.has(scope)) {
          const found = await trx
            .selectFrom("webhook_endpoints")
            .selectAll()
            .where("account_id", "=", event.account_id)
            .where("livemode", "=", event.livemode)
            .where("is_default", "=", 1)
            .executeTakeFirst();
          defaults.set(scope, found ?? null);
        }
        const endpoints: WebhookEndpointsTable[] = [];
        const fallback = defaults.get(scope);
        if (fallback) endpoints.push(fallback);
        if (event.callback_url !== null && event.callback_url !== fallback?.url) {
          endpoints.push(
            await this.callbackEndpoint(trx, event.account_id, event.livemode, event.callback_url, now),
          );
        }
        for (const endpoint of endpoints) {
          const enabled = endpoint.status === "enabled";
          await trx
            .insertInto("webhook_deliveries")
            .values({
              id: newSortableId("whd"),
              event_id: event.id,
              endpoint_id: endpoint.id,
              account_id: event.account_id,
              livemode: event.livemode,
              status: enabled ? "pending" : "cancelled",
              attempts: 0,
              next_attempt_at: enabled ? now : null,
              lease_until: null,
              last_status_code: null,
              last_error: enabled ? null : `endpoint disabled: ${endpoint.disabled_reason ?? "by its owner"}`,
              created_at: now,
              updated_at: now,
              delivered_at: null,
            })
            .onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).doNothing())
            .execute();
        }
      }
      await trx
        .updateTable("webhook_events")
        .set({ fanned_out: 1 })
        .where(
          "id",
          "in",
          events.map((e) => e.id),
        )
        .execute();
      return events.length;
    });
  }

  /** The endpoint row of an order's callback_url (made on first use). */
  private async callbackEndpoint(
    trx: Transaction<Database>,
    accountId: string,
    livemode: number,
    url: string,
    now: string,
  ): Promise<WebhookEndpointsTable> {
    await trx
      .insertInto("webhook_endpoints")
      .values({
        id: newSortableId("whe"),
        account_id: accountId,
        livemode,
        url,
        is_default: 0,
        status: "enabled",
        disabled_reason: null,
        disabled_at: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(["account_id", "livemode", "url"]).doNothing())
      .execute();
    return endpointByUrl(trx, accountId, livemode, url);
  }

  // --- Claiming and recording attempts ----------------------------------------------------------------

  /**
   * Takes up to `limit` due deliveries (pending, due, and not leased by a live worker) under a lease
   * until `leaseUntil`, counting the attempt. A worker that dies lets its lease lapse and another
   * worker takes the delivery over: delivery is at least once. On PostgreSQL, rows another worker is
   * claiming are skipped (FOR UPDATE SKIP LOCKED); SQLite has one writer at a time.
   */
  async claimDue(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]> {
    const ids = await this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom("webhook_deliveries")
        .select(["id", "attempts"])
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
        .orderBy("next_attempt_at")
        .limit(limit);
      if (this.dialect === "postgres") q = q.forUpdate().skipLocked();
      const due = await q.execute();
      const claimed: string[] = [];
      for (const row of due) {
        const result = await trx
          .updateTable("webhook_deliveries")
          .set({ lease_until: leaseUntil, attempts: Number(row.attempts) + 1, updated_at: now })
          .where("id", "=", row.id)
          .where("attempts", "=", row.attempts)
          .where("status", "=", "pending")
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) > 0) claimed.push(row.id);
      }
      return claimed;
    });
    if (ids.length === 0) return [];
    const rows = await this.deliveriesWithEvent()
      .select(["e.payload as event_payload", "p.status as endpoint_status"])
      .where("d.id", "in", ids)
      .execute();
    return rows.map(({ event_type, event_payload, event_created_at, url, endpoint_status, ...d }) => ({
      delivery: { ...d, attempts: Number(d.attempts) },
      event: { id: d.event_id, type: event_type, payload: event_payload, created_at: event_created_at },
      endpoint: { id: d.endpoint_id, url, status: endpoint_status },
    }));
  }

  /**
   * Logs attempt `attempt` of a delivery and settles the delivery by its outcome, in one transaction.
   * The delivery is changed only while the claim still holds (its attempt count unchanged): a worker
   * whose lease lapsed and was taken over only logs its attempt.
   */
  async recordAttempt(
    delivery: WebhookDeliveriesTable,
    attempt: number,
    result: AttemptResult,
  ): Promise<void> {
    const now = new Date(Date.parse(result.startedAt) + result.durationMs).toISOString();
    await this.db.transaction().execute(async (trx) => {
      const row: WebhookAttemptsTable = {
        id: newSortableId("wha"),
        delivery_id: delivery.id,
        attempt,
        started_at: result.startedAt,
        duration_ms: Math.round(result.durationMs),
        status_code: result.statusCode,
        error: result.error,
        outcome: result.outcome,
        next_attempt_at: result.nextAttemptAt,
      };
      await trx.insertInto("webhook_attempts").values(row).execute();
      const status: WebhookDeliveryStatus =
        result.outcome === "retrying"
          ? "pending"
          : result.outcome === "succeeded"
            ? "succeeded"
            : result.outcome;
      await trx
        .updateTable("webhook_deliveries")
        .set({
          status,
          next_attempt_at: result.nextAttemptAt,
          lease_until: null,
          last_status_code: result.statusCode,
          last_error: result.error,
          updated_at: now,
          delivered_at: result.outcome === "succeeded" ? now : null,
        })
        .where("id", "=", delivery.id)
        .where("attempts", "=", attempt)
        .where("status", "=", "pending")
        .execute();
      if (result.disableEndpoint !== undefined) {
        await trx
          .updateTable("webhook_endpoints")
          .set({
            status: "disabled",
            disabled_reason: result.disableEndpoint,
            disabled_at: now,
            updated_at: now,
          })
          .where("id", "=", delivery.endpoint_id)
          .where("status", "=", "enabled")
          .execute();
        await trx
          .updateTable("webhook_deliveries")
          .set({
            status: "cancelled",
            next_attempt_at: null,
            last_error: `endpoint disabled: ${result.disableEndpoint}`,
            updated_at: now,
          })
          .where("endpoint_id", "=", delivery.endpoint_id)
          .where("status", "=", "pending")
          .execute();
      }
    });
  }

  /** Deliveries with their event's type and time and their endpoint's URL (d, e and p for more). */
  private deliveriesWithEvent() {
    return this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_events as e", "e.id", "d.event_id")
      .innerJoin("webhook_endpoints as p", "p.id", "d.endpoint_id")
      .selectAll("d")
      .select(["e.type as event_type", "e.created_at as event_created_at", "p.url as url"]);
  }

  // --- The delivery log and redelivery ------------------------------------------------------------------

  /** An account's deliveries, newest first, with their events' type and order and the endpoint URL. */
  async listDeliveries(q: DeliveryQuery): Promise<DeliveryRow[]> {
    let query = this.deliveriesWithEvent()
      .select("e.order_id as order_id")
      .where("d.account_id", "=", q.accountId)
      .where("d.livemode", "=", q.livemode ? 1 : 0);
    if (q.endpointId !== undefined) query = query.where("d.endpoint_id", "=", q.endpointId);
    if (q.status !== undefined) query = query.where("d.status", "=", q.status);
    if (q.orderId !== undefined) query = query.where("e.order_id", "=", q.orderId);
    if (q.deliveryId !== undefined) query = query.where("d.id", "=", q.deliveryId);
    if (q.before !== undefined) query = query.where("d.id", "<", q.before);
    const rows = await query.orderBy("d.id", "desc").limit(q.limit).execute();
    return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
  }

  /** The attempts of these deliveries, oldest first. */
  attemptsOf(deliveryIds: string[]): Promise<WebhookAttemptsTable[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("delivery_id", "in", deliveryIds)
      .orderBy("id")
      .execute();
  }

  deliveryById(id: string): Promise<WebhookDeliveriesTable | undefined> {
    return this.db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * Queues deliveries again from now, with a fresh schedule: those named, or an endpoint's failed and
   * cancelled ones since a time. Pending ones are left alone (they are on their way). Returns how many.
   */
  async redeliver(
    filter: { ids: string[] } | { endpointId: string; since: string },
    now: string,
  ): Promise<number> {
    let q = this.db
      .updateTable("webhook_deliveries")
      .set({ status: "pending", attempts: 0, next_attempt_at: now, lease_until: null, updated_at: now })
      .where("status", "in", ["failed", "cancelled", "succeeded"]);
    if ("ids" in filter) {
      if (filter.ids.length === 0) return 0;
      q = q.where("id", "in", filter.ids);
    } else {
      q = q
        .where("endpoint_id", "=", filter.endpointId)
        .where("status", "in", ["failed", "cancelled"])
        .where("created_at", ">=", filter.since);
    }
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  eventsOfOrder(orderId: string): Promise<WebhookEventsTable[]> {
    return this.db
      .selectFrom("webhook_events")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("id")
      .execute();
  }

  /**
   * Up to `limit` events created before `before` (from `from` on), none of their deliveries pending, with
   * their deliveries and attempts, oldest first on webhook_events_created_idx; `rows` counts the events.
   */
  async purge(before: string, limit: number, from?: string): Promise<PurgedBatch> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom("webhook_events as e")
        .select(["e.id", "e.created_at"])
        .where("e.created_at", "<", before);
      if (from !== undefined) q = q.where("e.created_at", ">=", from);
      // On SQLite, a unary + keeps a term off the indexes (SQLite's documented way): without it the planner,
      // having no statistics, reads the events by fanned_out (every fanned-out event, sorted) and each
      // event's deliveries by status (every pending delivery), instead of created_at and event_id.
      const plain = (ref: string) => (this.dialect === "sqlite" ? sql`+${sql.ref(ref)}` : sql.ref(ref));
      const old = await q
        .where(plain("e.fanned_out"), "=", 1)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("webhook_deliveries as d")
                .select(sql`1`.as("one"))
                .whereRef("d.event_id", "=", "e.id")
                .where(plain("d.status"), "=", "pending"),
            ),
          ),
        )
        .orderBy("e.created_at")
        .limit(limit)
        .execute();
      const ids = old.map((e) => e.id);
      if (ids.length === 0) return { rows: 0, next: null };
      const deliveries = trx.selectFrom("webhook_deliveries").select("id").where("event_id", "in", ids);
      await trx.deleteFrom("webhook_attempts").where("delivery_id", "in", deliveries).execute();
      await trx.deleteFrom("webhook_deliveries").where("event_id", "in", ids).execute();
      await trx.deleteFrom("webhook_events").where("id", "in", ids).execute();
      return {
        rows: ids.length,
        next: ids.length < limit ? null : (old[old.length - 1]?.created_at ?? null),
      };
    });
  }

  /**
   * On SQLite, the rowids from the oldest event to the newest older than `before` (rowids increase as
   * events are written, and the purge takes the oldest first); on PostgreSQL, the planner's estimate of
   * the rows before `before` (from the column's statistics, the index's actual ends past them). Both count
   * events still pending too.
   */
  async backlog(before: string): Promise<number> {
    if (this.dialect === "postgres") {
      const plan = await sql<{ "QUERY PLAN": Array<{ Plan: { "Plan Rows": number } }> }>`
        explain (format json) select 1 from webhook_events where created_at < ${before}`.execute(this.db);
      return Math.round(plan.rows[0]?.["QUERY PLAN"][0]?.Plan["Plan Rows"] ?? 0);
    }
    const newest = await sql<{ n: number }>`
      select rowid as n from webhook_events where created_at < ${before} order by created_at desc limit 1`.execute(
      this.db,
    );
    const last = newest.rows[0]?.n;
    if (last === undefined) return 0;
    const oldest = await sql<{ n: number }>`select min(rowid) as n from webhook_events`.execute(this.db);
    return Math.max(0, last - (oldest.rows[0]?.n ?? last) + 1);
  }
}
