// Notifications' persistence (migration 0044; operations/notifications/, workers/notification-dispatcher.ts):
// the outbox the order writer fills in a change's transaction, the fan-out into messages (one per event and
// recipient, whoever does it), claiming due messages under a lease, recording attempts, the account's list,
// its opted-in people and the addresses that opted out.

import type { Kysely } from "kysely";
import { newSortableId } from "../ids.js";
import type { Dialect } from "./dialect.js";
import type {
  Database,
  NotificationAttemptsTable,
  NotificationEventsTable,
  NotificationStatus,
  NotificationSubscribersTable,
  NotificationsTable,
} from "./schema.js";
import type { NotificationAttemptResult, NotificationQuery, NotificationStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class KyselyNotificationStore implements NotificationStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Outbox rows not yet fanned out, oldest first. */
  pendingEvents(limit: number): Promise<NotificationEventsTable[]> {
    return this.db
      .selectFrom("notification_events")
      .selectAll()
      .where("fanned_out", "=", 0)
      .orderBy("id")
      .limit(limit)
      .execute();
  }

  /**
   * Writes an event's messages and marks it fanned out, in one transaction. A message another worker wrote
   * for the same event and recipient stands (the unique index): each is written once. Returns how many
   * this call wrote.
   */
  async fanOut(eventId: string, messages: NotificationsTable[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let written = 0;
      for (const m of messages) {
        const result = await trx
          .insertInto("notifications")
          .values(m)
          .onConflict((oc) =>
            oc.columns(["event_id", "recipient"]).where("resend_of", "is", null).doNothing(),
          )
          .executeTakeFirst();
        written += Number(result.numInsertedOrUpdatedRows ?? 0);
      }
      await trx.updateTable("notification_events").set({ fanned_out: 1 }).where("id", "=", eventId).execute();
      return written;
    });
  }

  /** Inserts a message (a resend). */
  async insert(row: NotificationsTable, tx?: WriteTx): Promise<void> {
    await trxOf(tx, this.db).insertInto("notifications").values(row).execute();
  }

  /**
   * Takes up to `limit` due messages (pending, due, not leased by a live worker) under a lease until
   * `leaseUntil`, counting the attempt. On PostgreSQL rows another worker is claiming are skipped.
   */
  async claimDue(now: string, leaseUntil: string, limit: number): Promise<NotificationsTable[]> {
    const ids = await this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom("notifications")
        .select(["id", "attempts"])
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
        .orderBy("next_attempt_at")
        .limit(limit);
      if (this.dialect === "postgres") q = q.forUpdate().skipLocked();
      const claimed: string[] = [];
      for (const row of await q.execute()) {
        const result = await trx
          .updateTable("notifications")
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
    const rows = await this.db.selectFrom("notifications").selectAll().where("id", "in", ids).execute();
    return rows.map(numeric);
  }

  /**
   * Logs attempt `attempt` of a message and settles it by the outcome, in `tx`. The message changes only
   * while the claim holds (its attempt count unchanged): false when another worker took it over (then only
   * the attempt is logged, and the caller seals nothing).
   */
  async recordAttempt(
    id: string,
    attempt: number,
    result: NotificationAttemptResult,
    seal: string | null,
    tx: WriteTx,
  ): Promise<boolean> {
    const trx = trxOf(tx, this.db);
    const now = new Date(Date.parse(result.startedAt) + result.durationMs).toISOString();
    await trx
      .insertInto("notification_attempts")
      .values({
        id: newSortableId("nta"),
        notification_id: id,
        attempt,
        started_at: result.startedAt,
        duration_ms: Math.round(result.durationMs),
        outcome: result.outcome,
        response: result.response,
        error: result.error,
        next_attempt_at: result.nextAttemptAt,
      })
      .execute();
    const status: NotificationStatus = result.outcome === "retrying" ? "pending" : result.outcome;
    const settled = result.outcome === "sent" || result.outcome === "kept";
    const updated = await trx
      .updateTable("notifications")
      .set({
        status,
        next_attempt_at: result.nextAttemptAt,
        lease_until: null,
        last_error: result.error,
        updated_at: now,
        ...(settled ? { sent_at: now, seal } : {}),
      })
      .where("id", "=", id)
      .where("attempts", "=", attempt)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  /** An account's messages, newest first. */
  async list(q: NotificationQuery): Promise<NotificationsTable[]> {
    let query = this.db
      .selectFrom("notifications")
      .selectAll()
      .where("account_id", "=", q.accountId)
      .where("livemode", "=", q.livemode ? 1 : 0);
    if (q.orderId !== undefined) query = query.where("order_id", "=", q.orderId);
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    if (q.before !== undefined) query = query.where("id", "<", q.before);
    const rows = await query.orderBy("id", "desc").limit(q.limit).execute();
    return rows.map(numeric);
  }

  async byId(id: string, tx?: WriteTx): Promise<NotificationsTable | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("notifications")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row && numeric(row);
  }

  /** A message's attempts, oldest first. */
  attemptsOf(id: string): Promise<NotificationAttemptsTable[]> {
    return this.db
      .selectFrom("notification_attempts")
      .selectAll()
      .where("notification_id", "=", id)
      .orderBy("attempt")
      .orderBy("id")
      .execute();
  }

  /** The messages of one outbox event (every recipient, resends too). */
  ofEvent(eventId: string): Promise<NotificationsTable[]> {
    return this.db
      .selectFrom("notifications")
      .selectAll()
      .where("event_id", "=", eventId)
      .orderBy("id")
      .execute();
  }

  subscribers(accountId: string, livemode: boolean): Promise<NotificationSubscribersTable[]> {
    return this.db
      .selectFrom("notification_subscribers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .orderBy("email")
      .execute();
  }

  /** Replaces the account's opted-in people with `rows` (all of one account and mode). */
  async setSubscribers(
    accountId: string,
    livemode: boolean,
    rows: NotificationSubscribersTable[],
    tx: WriteTx,
  ): Promise<void> {
    const trx = trxOf(tx, this.db);
    await trx
      .deleteFrom("notification_subscribers")
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .execute();
    if (rows.length > 0) await trx.insertInto("notification_subscribers").values(rows).execute();
  }

  /** Of `emails` (lower case), those that opted out of the account's messages in a mode. */
  async optedOut(accountId: string, livemode: boolean, emails: readonly string[]): Promise<Set<string>> {
    if (emails.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("notification_opt_outs")
      .select("email")
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("email", "in", [...new Set(emails)])
      .execute();
    return new Set(rows.map((r) => r.email));
  }

  /** Opts an address out (true) or back in (false); whether anything changed. */
  async setOptOut(
    row: { account_id: string; livemode: number; email: string; created_at: string; source: string },
    out: boolean,
    tx?: WriteTx,
  ): Promise<boolean> {
    const trx = trxOf(tx, this.db);
    if (out) {
      const result = await trx
        .insertInto("notification_opt_outs")
        .values(row)
        .onConflict((oc) => oc.columns(["account_id", "livemode", "email"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    }
    const result = await trx
      .deleteFrom("notification_opt_outs")
      .where("account_id", "=", row.account_id)
      .where("livemode", "=", row.livemode)
      .where("email", "=", row.email)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

/** PostgreSQL answers integers as numbers already; SQLite too, but counts may come back as bigint. */
function numeric(row: NotificationsTable): NotificationsTable {
  return { ...row, attempts: Number(row.attempts), livemode: Number(row.livemode) };
}
