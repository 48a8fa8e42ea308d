// An order's dispatch latency: from its request's arrival (the transport's first hook, before the key is
// checked) to its first offer committed and durable, on the monotonic clock. It is known only once the
// order's commit has returned (after the group commit's sync), so it is stored by a write of its own. The
// caller's answer does not wait for that write, and it costs no commit of its own either: it rides along
// with the next group commit (Store.writeDeferred: the next order's, say), or is committed alone within a
// second when none comes. An evals report computed in this process first commits the ones still waiting
// (dispatchLatenciesStored), so an order answered before the report counts in it. A process that dies
// before the write commits (a graceful stop commits it: closing the store flushes deferred writes) leaves
// that order without a recorded latency: the evals count such orders openly instead of dropping them.

import type { Store } from "../../storage/store.js";
import type { Services } from "../kernel/operation.js";

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
    // The order's row is declared: the batch it rides with locks it in the lock order (kysely-store.ts).
    .writeDeferred((tx) => tx.recordDispatchLatency(orderId, latencyMs), { orders: [orderId] })
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

/** Commits the dispatch latencies this process has waiting for `store`; resolves once they are written. */
export async function dispatchLatenciesStored(services: Pick<Services, "store">): Promise<void> {
  const writes = inFlight.get(services.store);
  if (!writes || writes.size === 0) return;
  await services.store.flushDeferred();
  await Promise.all([...writes]);
}
