// Metrics across `--workers`: the primary holds the metrics listener and, for each scrape, gathers every
// worker's registry over IPC (prom-client's AggregatorRegistry) and answers with the sum, so one scrape per
// host sees the whole cluster. Counters and histograms add up; gauges declare their own aggregation (see
// metrics.ts). A worker that does not answer within prom-client's 5 s fails the scrape (503).

import { AggregatorRegistry, type Registry } from "prom-client";
import type { MetricsSource } from "./transports/http/metrics-server.js";

/** In the primary: the cluster-wide metrics, collected from the workers at each scrape. */
export function clusterMetricsSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { contentType: aggregator.contentType, scrape: () => aggregator.clusterMetrics() };
}

/** In a worker: answer the primary's collection requests with this worker's registry. */
export function offerWorkerMetrics(registry: Registry): void {
  new AggregatorRegistry(); // installs the worker's listener for the primary's requests
  AggregatorRegistry.setRegistries([registry]);
}
