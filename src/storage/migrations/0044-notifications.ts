// Issue 35, the customer's side, step 2: notifications to the people at the site (operations/
// notifications/, workers/notification-dispatcher.ts).
//
// - notification_events, the outbox: one row per notifiable change of an order (domain/notifications/
//   events.ts), written in the change's transaction (storage/order-writer.ts) and only when the order names
//   a site or its account has opted-in people. fanned_out: the worker has turned it into messages.
// - notifications, the messages: one per event and recipient (notifications_event_recipient_idx, unique
//   for the event's own messages, so two workers fanning out one event make one message; a resend is a
//   new row naming the message it resends). Rendered when fanned out (subject, text, html, digest), then
//   claimed under a lease, sent (or kept, with no SMTP server), retried with backoff, then failed.
// - notification_attempts: every attempt of a message (the delivery log).
// - notification_opt_outs: the addresses that asked for no more messages, per account and mode.
// - notification_subscribers: the account's people who opted in, with the events they want (JSON).

import type { Kysely, Migration } from "kysely";
import { sql } from "kysely";

/** The outbox. */
async function outbox(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("notification_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("livemode", "integer", (c) => c.notNull())
    .addColumn("order_id", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("fanned_out", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex("notification_events_pending_idx")
    .on("notification_events")
    .columns(["fanned_out", "id"])
    .execute();
}

/** The messages and their attempts. */
async function messages(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("notifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("resend_of", "text")
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("livemode", "integer", (c) => c.notNull())
    .addColumn("order_id", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("recipient", "text", (c) => c.notNull())
    .addColumn("recipient_role", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "text")
    .addColumn("lease_until", "text")
    .addColumn("message_id", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("text_body", "text", (c) => c.notNull())
    .addColumn("html_body", "text", (c) => c.notNull())
    .addColumn("digest", "text", (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("sent_at", "text")
    .addColumn("seal", "text")
    .execute();
  await db.schema
    .createIndex("notifications_event_recipient_idx")
    .on("notifications")
    .columns(["event_id", "recipient"])
    .unique()
    .where(sql.ref("resend_of"), "is", null)
    .execute();
  // The worker's claim: pending messages by when they are due.
  await db.schema
    .createIndex("notifications_due_idx")
    .on("notifications")
    .columns(["status", "next_attempt_at"])
    .execute();
  // The account's list, newest first, and one order's messages.
  await db.schema
    .createIndex("notifications_account_idx")
    .on("notifications")
    .columns(["account_id", "livemode", "id"])
    .execute();
  await db.schema
    .createIndex("notifications_order_idx")
    .on("notifications")
    .columns(["order_id", "id"])
    .execute();
}

async function attemptsAndPeople(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("notification_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("notification_id", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("response", "text")
    .addColumn("error", "text")
    .addColumn("next_attempt_at", "text")
    .execute();
  await db.schema
    .createIndex("notification_attempts_notification_idx")
    .on("notification_attempts")
    .columns(["notification_id", "attempt"])
    .execute();
  await db.schema
    .createTable("notification_opt_outs")
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("livemode", "integer", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("notification_opt_outs_pk", ["account_id", "livemode", "email"])
    .execute();
  await db.schema
    .createTable("notification_subscribers")
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("livemode", "integer", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("seal", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("notification_subscribers_pk", ["account_id", "livemode", "email"])
    .execute();
}

export const migration0044: Migration = {
  async up(db: Kysely<unknown>) {
    await outbox(db);
    await messages(db);
    await attemptsAndPeople(db);
  },
  async down(db: Kysely<unknown>) {
    for (const table of [
      "notification_subscribers",
      "notification_opt_outs",
      "notification_attempts",
      "notifications",
      "notification_events",
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
