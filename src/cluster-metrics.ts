// /metrics across `--workers`: a scrape may land on any worker, so the worker that answers asks the
// primary, which gathers every worker's registry over IPC (prom-client's AggregatorRegistry) and answers
// with the sum. Counters and histograms add up; gauges declare their own aggregation (see metrics.ts).

import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

const REQUEST = "fsd:metrics-request";
const RESPONSE = "fsd:metrics-response";
const TIMEOUT_MS = 6000;

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}
interface MetricsResponse {
  type: typeof RESPONSE;
  id: number;
  text?: string;
  error?: string;
}

/** In the primary: answer workers' requests for the cluster-wide metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker: Worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) return;
    const reply = (body: Omit<MetricsResponse, "type" | "id">) => {
      if (worker.isConnected()) worker.send({ type: RESPONSE, id: message.id, ...body });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/**
 * In a worker: offer this worker's registry to the primary's aggregation and return a function that
 * fetches the cluster-wide metrics text.
 */
export function clusterMetricsSource(registry: Registry): () => Promise<string> {
  new AggregatorRegistry(); // installs the worker's listener for the primary's collection requests
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on("message", (message: MetricsResponse) => {
    if (message?.type !== RESPONSE) return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.text !== undefined) waiter.resolve(message.text);
    else waiter.reject(new Error(`cluster metrics: ${message.error ?? "no answer"}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error("cluster metrics: the primary did not answer in time"));
      }, TIMEOUT_MS);
      pending.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
    });
}
