// The webhook dispatcher: turns outbox events into deliveries (one per endpoint) and delivers them, at
// least once, with the Standard Webhooks headers, through the SSRF-safe fetcher.
//
// - Every process runs one (WEBHOOK_INTERVAL_MS). Deliveries are claimed under a lease in the store, so
//   processes share the work and a process that dies mid-delivery leaves it to another once the lease
//   lapses; the event is delivered again (receivers deduplicate on webhook-id).
// - Only a 2xx answer is success. Redirects are not followed (a 3xx is a failure). 410 Gone disables the
//   endpoint and cancels its pending deliveries. Anything else is retried on the schedule in
//   webhooks/events.ts (about three days, with jitter), later if the endpoint's Retry-After asks.
// - Events, deliveries and attempts are purged WEBHOOK_RETENTION_DAYS after the event, once none is
//   pending, and so is the order event log: a pass every hour, in small batches that yield to requests,
//   a bounded time per tick (retention-purge.ts).

import type { Metrics } from "../metrics.js";
import type { SafeFetcher } from "../net/safe-fetch.js";
import type { Store } from "../storage/store.js";
import type { AttemptResult, ClaimedDelivery } from "../storage/webhook-store.js";
import { MAX_ATTEMPTS, nextAttemptAt, signatureHeader } from "../webhooks/events.js";
import { Periodic } from "./periodic.js";
import { RetentionPurge } from "./retention-purge.js";

/** Largest answer read from an endpoint: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;
const FAN_OUT_BATCH = 200;
/** Rounds of claiming per tick while every claim comes back full (bounds one tick's work). */
const MAX_ROUNDS = 8;
const PURGE_EVERY_MS = 3_600_000;
/**
 * Retention's share of each tick (time in purge batches), and its batches: 500 order events are read and
 * deleted in 2.6-2.7 ms of SQLite time under load (bench/RESULTS.md, issue 30); a webhook event's batch
 * deletes its deliveries and attempts too.
 */
const RETENTION_DEFAULTS = { budgetMs: 50, orderEventsBatch: 500, webhookEventsBatch: 100 };

export interface WebhookDispatcherOptions {
  fetcher: SafeFetcher;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** The fetcher's deadline for one attempt: a lease outlasts it. */
  timeoutMs: number;
  retentionDays: number;
  /** Run with each hourly retention pass: resumable uploads and blobs no attachment names, a day old. */
  collectOrphans?: (now: Date) => Promise<number>;
  now?: () => Date;
  random?: () => number;
  metrics?: Metrics;
  logger?: { error(obj: object, msg: string): void };
  userAgent?: string;
  /** close() closes the fetcher too (the dispatcher made it). */
  ownsFetcher?: boolean;
  /** Retention's budget per tick and batch sizes (RETENTION_DEFAULTS), and the monotonic clock in
   * milliseconds the budget is measured on (performance.now). */
  retention?: Partial<typeof RETENTION_DEFAULTS> & { clock?: () => number };
}

export class WebhookDispatcher {
  private readonly loop = new Periodic(
    () => this.tick(),
    (err) => this.options.logger?.error({ err }, "webhook dispatch failed"),
  );
  private lastPurge = 0;
  private stopping = false;
  private readonly retention: RetentionPurge;

  constructor(
    private readonly store: Store,
    private readonly options: WebhookDispatcherOptions,
  ) {
    const r = { ...RETENTION_DEFAULTS, ...options.retention };
    const gauge = options.metrics?.retentionBacklog;
    this.retention = new RetentionPurge(
      [
        { name: "webhook_events", table: store.webhooks, batch: r.webhookEventsBatch },
        // The live event stream resumes from the order event log as far back as webhooks are kept.
        { name: "order_events", table: store.orderEvents, batch: r.orderEventsBatch },
      ],
      {
        budgetMs: r.budgetMs,
        clock: options.retention?.clock ?? (() => performance.now()),
        ...(gauge ? { onBacklog: (table: string, rows: number) => gauge.set({ table }, rows) } : {}),
      },
    );
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Fans new events out, then makes every due attempt (a few rounds at most). Returns attempts made. */
  async tick(): Promise<number> {
    const webhooks = this.store.webhooks;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if ((await webhooks.fanOut(FAN_OUT_BATCH, this.now().toISOString())) < FAN_OUT_BATCH) break;
      // SQLite answers on this thread: let requests in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    let attempts = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = this.now();
      const lease = new Date(now.getTime() + this.options.timeoutMs + 60_000).toISOString();
      const claimed = await webhooks.claimDue(now.toISOString(), lease, this.options.concurrency);
      await Promise.all(claimed.map((c) => this.deliver(c)));
      attempts += claimed.length;
      if (claimed.length < this.options.concurrency) break;
    }
    const now = this.now();
    if (!this.retention.purging && now.getTime() - this.lastPurge >= PURGE_EVERY_MS && !this.stopping) {
      this.lastPurge = now.getTime();
      // A failure here is logged and leaves the rest of the tick (deliveries, the purge) to run.
      await this.options
        .collectOrphans?.(now)
        .catch((err) =>
          this.options.logger?.error({ err }, "collecting expired uploads and orphan blobs failed"),
        );
      await this.retention.begin(
        new Date(now.getTime() - this.options.retentionDays * 86_400_000).toISOString(),
      );
    }
    await this.retention.step(() => this.stopping);
    return attempts;
  }

  /** One attempt of a claimed delivery, and its record. */
  async deliver(claimed: ClaimedDelivery): Promise<void> {
    const { delivery, event, endpoint } = claimed;
    const attempt = delivery.attempts;
    const started = this.now();
    const startedAt = started.toISOString();
    const clock = performance.now();
    const elapsed = () => performance.now() - clock;
    const retryOrFail = (statusCode: number | null, error: string, retryAfter?: string): AttemptResult => {
      const next =
        attempt >= MAX_ATTEMPTS ? null : nextAttemptAt(attempt, this.now(), retryAfter, this.options.random);
      return {
        startedAt,
        durationMs: elapsed(),
        statusCode,
        error: next === null ? `${error}; gave up after ${attempt} attempts` : error,
        outcome: next === null ? "failed" : "retrying",
        nextAttemptAt: next?.toISOString() ?? null,
      };
    };
    let result: AttemptResult;
    if (endpoint.status !== "enabled") {
      result = {
        startedAt,
        durationMs: 0,
        statusCode: null,
        error: "endpoint disabled",
        outcome: "cancelled",
        nextAttemptAt: null,
      };
    } else {
      const secrets = await this.store.webhooks.signingSecrets(
        delivery.account_id,
        delivery.livemode === 1,
        startedAt,
      );
      if (secrets.length === 0) {
        result = retryOrFail(
          null,
          "no signing secret: create one with POST /api/dispatch/v1/webhooks/secret; deliveries resume on the next retry",
        );
      } else {
        const timestamp = Math.floor(started.getTime() / 1000);
        const answer = await this.options.fetcher.fetch(endpoint.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": event.id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signatureHeader(
              secrets.map((s) => s.secret),
              event.id,
              timestamp,
              event.payload,
            ),
            ...(this.options.userAgent ? { "user-agent": this.options.userAgent } : {}),
          },
          body: event.payload,
          followRedirects: false,
          maxBodyBytes: MAX_ANSWER_BYTES,
        });
        if (!answer.ok) {
          result = retryOrFail(null, `${answer.code}: ${answer.message}`);
        } else if (answer.status >= 200 && answer.status <= 299) {
          result = {
            startedAt,
            durationMs: elapsed(),
            statusCode: answer.status,
            error: null,
            outcome: "succeeded",
            nextAttemptAt: null,
          };
        } else if (answer.status === 410) {
          result = {
            startedAt,
            durationMs: elapsed(),
            statusCode: 410,
            error: "410 Gone: the endpoint is disabled",
            outcome: "failed",
            nextAttemptAt: null,
            disableEndpoint: "the endpoint answered 410 Gone",
          };
        } else if (answer.status >= 300 && answer.status <= 399) {
          const location = answer.headers.location;
          result = retryOrFail(
            answer.status,
            `HTTP ${answer.status}: redirects are not followed${location ? ` (Location: ${location.slice(0, 200)})` : ""}`,
          );
        } else {
          result = retryOrFail(answer.status, `HTTP ${answer.status}`, answer.headers["retry-after"]);
        }
      }
    }
    try {
      await this.store.webhooks.recordAttempt(delivery, attempt, result);
      this.options.metrics?.webhookAttempts.inc({ outcome: result.outcome });
    } catch (err) {
      // The lease lapses and another attempt follows: at least once.
      this.options.logger?.error({ err, delivery: delivery.id }, "webhook attempt could not be recorded");
    }
  }

  start(intervalMs: number): void {
    this.stopping = false;
    this.loop.start(intervalMs);
  }

  /** Stops ticking; a tick in progress ends after its current purge batch (a backlog waits for the next
   * start). */
  stop(): Promise<void> {
    this.stopping = true;
    return this.loop.stop();
  }

  /** Stops, and closes the fetcher if it is the dispatcher's own. */
  async close(): Promise<void> {
    await this.stop();
    if (this.options.ownsFetcher) await this.options.fetcher.close();
  }
}
