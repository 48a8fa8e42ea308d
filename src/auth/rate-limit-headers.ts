// Rate-limit response fields: IETF draft-ietf-httpapi-ratelimit-headers-11 (`RateLimit-Policy`,
// `RateLimit`), the widespread `X-RateLimit-*` trio, and `Retry-After` on refusals.

import type { RateDecision, RatePolicy } from "./rate-limiter.js";

export function rateLimitHeaders(policy: RatePolicy, d: RateDecision, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {
    // q/w: the sustained quota per window; fsd-burst: the bucket capacity (vendor parameter per the draft).
    "RateLimit-Policy": `"${policy.name}";q=${policy.ratePerMinute};w=60;fsd-burst=${policy.burst}`,
    RateLimit: `"${policy.name}";r=${d.remaining};t=${d.resetSeconds}`,
    "X-RateLimit-Limit": String(d.limit),
    "X-RateLimit-Remaining": String(d.remaining),
    // Unix time (seconds) at which the bucket is full again.
    "X-RateLimit-Reset": String(Math.ceil(nowMs / 1000) + d.resetSeconds),
  };
  if (!d.allowed) headers["Retry-After"] = String(d.retryAfterSeconds);
  return headers;
}
