// An order's dispatch latency: from its request's arrival (the transport's first hook, before the key is
// checked) to its first offer committed and durable, on the monotonic clock. It is known only once the
// order's commit has returned (after the group commit's sync), so it is stored by a write of its own,
// submitted to the next group commit at once; the caller's answer does not wait for it. An evals report
// computed in this process first waits for the writes submitted before it (dispatchLatenciesStored), so
// an order answered before the report counts. A process that dies between the two commits (a graceful
// stop drains the group commit first) leaves that order without a recorded latency: the evals count such
// orders openly instead of dropping them.

import type { Store } from "../storage/store.js";
import type { Services } from "./operation.js";

const inFlight = new WeakMap<Store, Set<Promise<void>>>();

/** Stores an order's dispatch latency (milliseconds) after its first offer committed. */
export function recordDispatchLatency(
  services: Pick<Services, "store" | "metrics">,
  orderId: string,
  latencyMs: number,
): void {
  const { store, metrics } = services;
  metrics.dispatchLatency.observe(latencyMs / 1000);
  let writes = inFlight.get(store);
  if (!writes) {
    writes = new Set();
    inFlight.set(store, writes);
  }
  const pending = writes;
  const write = store
    .write((tx) => tx.recordDispatchLatency(orderId, latencyMs))
    .catch(() => {
      // The order and its offer stand; only the measurement is lost (the evals show the order as
      // offered without a recorded latency), and the metric says how often.
      metrics.dispatchLatencyUnrecorded.inc();
    })
    .then(() => {
      pending.delete(write);
    });
  pending.add(write);
}

/** Resolves once every dispatch latency this process submitted for `store` so far is written (or lost). */
export async function dispatchLatenciesStored(services: Pick<Services, "store">): Promise<void> {
  const writes = inFlight.get(services.store);
  if (writes && writes.size > 0) await Promise.all([...writes]);
}
