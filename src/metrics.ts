// Operational metrics in Prometheus format (prom-client), one registry per app instance: requests by
// operation and status (and apart, those whose client hung up before they arrived), their duration, dispatch latency, limiter decisions, store pool use and the
// group-commit queue, and the retention backlog. Served by the metrics listener (transports/http/metrics-server.ts), not the API.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface StoreGauges {
  /** Connections of the store's pool: total, idle, and requests waiting for one (PostgreSQL). */
  pool?(): { total: number; idle: number; waiting: number };
  /** Writes waiting for the next group commit. */
  queueDepth(): number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<"operation" | "method" | "status">;
  readonly requestsAborted: Counter<"operation">;
  readonly duration: Histogram<"operation" | "status">;
  readonly dispatchLatency: Histogram;
  readonly dispatchLatencyUnrecorded: Counter;
  readonly limiterDecisions: Counter<"source" | "outcome">;
  readonly limiterFallback: Gauge;
  readonly auditSequenced: Counter;
  readonly webhookAttempts: Counter;
  readonly retentionBacklog: Gauge<"table">;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "fsd_http_requests_total",
      help: "HTTP requests answered, by operation, method and status.",
      labelNames: ["operation", "method", "status"],
      registers,
    });
    this.requestsAborted = new Counter({
      name: "fsd_http_requests_aborted_total",
      help: "Requests whose client hung up before the request had fully arrived (a body cut short), by operation: answered nothing, and not in fsd_http_requests_total.",
      labelNames: ["operation"],
      registers,
    });
    this.duration = new Histogram({
      name: "fsd_http_request_duration_seconds",
      help: "Time from request arrival to response, by operation and status.",
      labelNames: ["operation", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.dispatchLatency = new Histogram({
      name: "fsd_dispatch_latency_seconds",
      help: "Order request received (before authentication) to its first offer committed, durable (orders offered automatically).",
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.34, 1],
      registers,
    });
    this.dispatchLatencyUnrecorded = new Counter({
      name: "fsd_dispatch_latency_unrecorded_total",
      help: "Orders whose first offer committed but whose dispatch latency could not be stored with them.",
      registers,
    });
    this.limiterDecisions = new Counter({
      name: "fsd_rate_limiter_decisions_total",
      help: "Rate-limit decisions, by where they were made (redis, memory) and outcome (allowed, limited).",
      labelNames: ["source", "outcome"],
      registers,
    });
    this.auditSequenced = new Counter({
      name: "fsd_audit_leaves_sequenced_total",
      help: "Audit records this process brought under a signed checkpoint.",
      registers,
    });
    this.webhookAttempts = new Counter({
      name: "fsd_webhook_attempts_total",
      help: "Webhook delivery attempts this process made, by outcome (succeeded, retrying, failed, cancelled).",
      labelNames: ["outcome"],
      registers,
    });
    this.retentionBacklog = new Gauge({
      name: "fsd_retention_backlog_rows",
      help: "Rows older than the retention cutoff still to purge, by table (order_events; webhook_events, whose deliveries and attempts go with them): an estimate made when a purge pass starts (hourly), less what the pass has purged since; 0 once it has purged all it could.",
      labelNames: ["table"],
      aggregator: "max",
      registers,
    });
    this.limiterFallback = new Gauge({
      name: "fsd_rate_limiter_fallback",
      help: "1 while the shared limiter is unavailable and each process limits in memory.",
      aggregator: "max",
      registers,
    });
  }

  /** Registers the audit queue's depth, read at scrape time. */
  watchAudit(audit: { pendingAuditCount(): Promise<number> }): void {
    new Gauge({
      name: "fsd_audit_pending_records",
      help: "Audit records written but not yet under a signed checkpoint (queued, or in the tree past the latest checkpoint).",
      aggregator: "max",
      registers: [this.registry],
      async collect() {
        try {
          this.set(await audit.pendingAuditCount());
        } catch {
          // store unreachable: keep the last value; /readyz reports the outage
        }
      },
    });
  }

  /** Registers the store's gauges, read at scrape time. */
  watchStore(store: StoreGauges): void {
    const registers = [this.registry];
    new Gauge({
      name: "fsd_store_write_queue_depth",
      help: "Writes waiting for the next group commit.",
      registers,
      collect() {
        this.set(store.queueDepth());
      },
    });
    const pool = store.pool?.bind(store);
    if (!pool) return;
    new Gauge({
      name: "fsd_store_pool_connections",
      help: "Store pool connections by state (total, idle) and requests waiting for one.",
      labelNames: ["state"],
      registers,
      collect() {
        const p = pool();
        this.set({ state: "total" }, p.total);
        this.set({ state: "idle" }, p.idle);
        this.set({ state: "waiting" }, p.waiting);
      },
    });
  }
}
