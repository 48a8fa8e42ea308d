// Stops what createServices started besides the store (the optimiser's threads, the audit sequencer, the
// rate limiter, the outbound fetcher), in the order the service's own shutdown does (src/main.ts).

import type { Services } from "../../src/operations/kernel/operation.js";

export async function closeServices(services: Services): Promise<void> {
  await services.planner.close();
  await services.audit.stop();
  await services.limiter.close();
  await services.fetcher.close();
}
