// The notifications' worker (issue 35): turns outbox events into messages (operations/notifications/
// compose.ts: one per recipient, rendered once) and sends due messages through the mail port, at least
// once and never as two messages (the Message-ID is the same on every attempt).
//
// - Every process runs one (NOTIFY_INTERVAL_MS). Messages are claimed under a lease in the store, so
//   processes share the work; on PostgreSQL two workers never claim one message, and a message per event
//   and recipient is written once whoever fans the event out (the unique index).
// - An attempt that fails (refused, timed out, no connection) is retried after NOTIFY_RETRY_BASE_MS,
//   doubling each time up to an hour, until NOTIFY_MAX_ATTEMPTS; then the message is failed. Every attempt
//   is logged; a message sent (or kept, with no SMTP server) is sealed, notification.sent with its digest.
// - An address that opted out after its message was written gets nothing: the message is cancelled.
// - Requests never wait on SMTP: the order's change wrote only its outbox row.

import { sealRecord } from "../audit/record.js";
import type { Config } from "../config.js";
import type { Mailer, MailOutcome } from "../net/mailer.js";
import { type ComposeServices, messagesOf, unsubscribeUrl } from "../operations/notifications/compose.js";
import type { NotificationsTable } from "../storage/schema.js";
import type { NotificationAttemptResult } from "../storage/store.js";
import { Periodic } from "./periodic.js";

const FAN_OUT_BATCH = 50;
const MAX_ROUNDS = 8;
const MAX_BACKOFF_MS = 3_600_000;

export interface NotificationDispatcherOptions {
  mailer: Mailer;
  /** The base of the links messages carry (PUBLIC_BASE_URL, else this host). */
  baseUrl: string;
  /** Messages in flight at once in this process. */
  concurrency?: number;
  logger?: { error(obj: object, msg: string): void };
}

type DispatchConfig = Pick<
  Config,
  "NOTIFY_FROM" | "NOTIFY_TIMEOUT_MS" | "NOTIFY_MAX_ATTEMPTS" | "NOTIFY_RETRY_BASE_MS"
>;

/** When attempt `attempt` (1-based) failed at `now`: the next one's time, or null to give up. */
function nextNotifyAttempt(config: DispatchConfig, attempt: number, now: Date): Date | null {
  if (attempt >= config.NOTIFY_MAX_ATTEMPTS) return null;
  const wait = Math.min(config.NOTIFY_RETRY_BASE_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS);
  return new Date(now.getTime() + wait);
}

export class NotificationDispatcher {
  private readonly loop = new Periodic(
    () => this.tick(),
    (err) => this.options.logger?.error({ err }, "notification dispatch failed"),
  );

  constructor(
    private readonly services: ComposeServices,
    private readonly options: NotificationDispatcherOptions,
  ) {}

  private get config(): Config {
    return this.services.config;
  }

  /** Fans new events out, then makes every due attempt (a few rounds at most). Returns attempts made. */
  async tick(): Promise<number> {
    await this.fanOut();
    const concurrency = this.options.concurrency ?? 4;
    let attempts = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = this.services.now();
      const lease = new Date(now.getTime() + this.config.NOTIFY_TIMEOUT_MS * 4 + 60_000).toISOString();
      const claimed = await this.services.store.notifications.claimDue(now.toISOString(), lease, concurrency);
      await Promise.all(claimed.map((n) => this.send(n)));
      attempts += claimed.length;
      if (claimed.length < concurrency) break;
    }
    return attempts;
  }

  /** Turns new outbox events into messages; returns how many events it handled. */
  async fanOut(): Promise<number> {
    const store = this.services.store.notifications;
    let handled = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const events = await store.pendingEvents(FAN_OUT_BATCH);
      for (const event of events) {
        // One event that cannot be composed now (a read failed) waits for the next tick; the others go on.
        try {
          await store.fanOut(event.id, await messagesOf(this.services, event, this.options.baseUrl));
        } catch (err) {
          this.options.logger?.error({ err, event: event.id }, "notification fan-out failed");
        }
      }
      handled += events.length;
      if (events.length < FAN_OUT_BATCH) break;
    }
    return handled;
  }

  /** One attempt of a claimed message, and its record (sealed when sent or kept). */
  async send(n: NotificationsTable): Promise<void> {
    const startedAt = this.services.now();
    const clock = performance.now();
    const optedOut = await this.services.store.notifications.optedOut(n.account_id, n.livemode === 1, [
      n.recipient,
    ]);
    let outcome: MailOutcome | "opted_out";
    if (optedOut.size > 0) outcome = "opted_out";
    else {
      outcome = await this.options.mailer.send({
        from: this.config.NOTIFY_FROM,
        to: n.recipient,
        subject: n.subject,
        text: n.text_body,
        html: n.html_body,
        messageId: n.message_id,
        headers: this.unsubscribeHeaders(n.id),
      });
    }
    const result = this.resultOf(n.attempts, outcome, startedAt, performance.now() - clock);
    try {
      await this.record(n, result);
    } catch (err) {
      // The lease lapses and another attempt follows (the same Message-ID).
      this.options.logger?.error({ err, notification: n.id }, "notification attempt could not be recorded");
    }
  }

  private resultOf(
    attempt: number,
    outcome: MailOutcome | "opted_out",
    startedAt: Date,
    durationMs: number,
  ): NotificationAttemptResult {
    const base = { startedAt: startedAt.toISOString(), durationMs, response: null, nextAttemptAt: null };
    if (outcome === "opted_out")
      return { ...base, outcome: "cancelled", error: "the recipient opted out before it was sent" };
    if (outcome.ok)
      return { ...base, outcome: outcome.kept ? "kept" : "sent", response: outcome.response, error: null };
    const next = nextNotifyAttempt(this.config, attempt, this.services.now());
    const error = outcome.code === null ? outcome.error : `${outcome.code}: ${outcome.error}`;
    return next === null
      ? { ...base, outcome: "failed", error: `${error}; gave up after ${attempt} attempts` }
      : { ...base, outcome: "retrying", error, nextAttemptAt: next.toISOString() };
  }

  private async record(n: NotificationsTable, result: NotificationAttemptResult): Promise<void> {
    const { store } = this.services;
    const settled = result.outcome === "sent" || result.outcome === "kept";
    const record = settled
      ? sealRecord({
          kind: "notification.sent",
          at: result.startedAt,
          accountId: n.account_id,
          livemode: n.livemode === 1,
          orderId: n.order_id,
          actor: "system:notifications",
          data: {
            notification_id: n.id,
            message_id: n.message_id,
            event: n.event,
            recipient_role: n.recipient_role,
            status: result.outcome,
            resend_of: n.resend_of,
            digest: n.digest,
          },
        })
      : null;
    await store.write(async (tx) => {
      const held = await store.notifications.recordAttempt(
        n.id,
        n.attempts,
        result,
        record?.seal ?? null,
        tx,
      );
      if (held && record) tx.appendAudit(record);
    });
  }

  /** List-Unsubscribe (RFC 2369) and its one-click POST (RFC 8058): the message's unsubscribe link. */
  private unsubscribeHeaders(id: string): Record<string, string> {
    const url = unsubscribeUrl(this.services, this.options.baseUrl, id);
    return { "List-Unsubscribe": `<${url}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" };
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  async close(): Promise<void> {
    await this.loop.stop();
    this.options.mailer.close();
  }
}
