// Readiness of this process: the store must answer; the rate limiter is reported but does not fail
// readiness (without Redis each process limits in memory and keeps serving, see redis-rate-limiter.ts).

import type { Services } from "./operation.js";

export interface Readiness {
  ready: boolean;
  checks: { store: "ok" | "unreachable"; rate_limiter: "ok" | "degraded" | "in_memory" };
  /** Why the store check failed, for the log. */
  error?: unknown;
}

export async function checkReadiness(services: Services): Promise<Readiness> {
  const limiter = services.limiter.ready;
  const rateLimiter = limiter ? ((await limiter.call(services.limiter)) ? "ok" : "degraded") : "in_memory";
  try {
    await services.store.ping();
    return { ready: true, checks: { store: "ok", rate_limiter: rateLimiter } };
  } catch (error) {
    return { ready: false, checks: { store: "unreachable", rate_limiter: rateLimiter }, error };
  }
}
