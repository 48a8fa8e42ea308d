// The rate limiter port and its in-memory GCRA adapter.
//
// GCRA (generic cell rate algorithm): each key keeps a theoretical arrival time (TAT). With emission
// interval T = 60 s / ratePerMinute and capacity `burst`, a request is admitted when
// max(TAT, now) + T - now <= burst * T; then TAT advances by T. A fresh key admits `burst` requests at
// once and refills at `ratePerMinute`.

export interface RatePolicy {
  /** Policy name as shown in RateLimit-Policy. */
  name: string;
  ratePerMinute: number;
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Capacity (burst). */
  limit: number;
  /** Requests that could be made right now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until the next request would be admitted (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Spends one request from `key`'s bucket; in-process adapters answer synchronously. */
  consume(key: string, policy: RatePolicy): RateDecision | Promise<RateDecision>;
  /** Whether a shared backend answers (absent for in-process limiters). */
  ready?(): Promise<boolean>;
  close(): Promise<void>;
}

function gcraDecide(
  tat: number | undefined,
  now: number,
  policy: RatePolicy,
): { decision: RateDecision; newTat: number | undefined } {
  const interval = 60_000 / policy.ratePerMinute;
  const capacity = interval * policy.burst;
  const base = Math.max(tat ?? now, now);
  const candidate = base + interval;
  if (candidate - now <= capacity) {
    return {
      newTat: candidate,
      decision: {
        allowed: true,
        limit: policy.burst,
        remaining: Math.max(0, Math.floor((capacity - (candidate - now)) / interval)),
        resetSeconds: Math.ceil((candidate - now) / 1000),
        retryAfterSeconds: 0,
      },
    };
  }
  return {
    newTat: tat,
    decision: {
      allowed: false,
      limit: policy.burst,
      remaining: 0,
      resetSeconds: Math.ceil((base - now) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((candidate - capacity - now) / 1000)),
    },
  };
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly onDecision?: (allowed: boolean) => void,
  ) {
    // Drop keys whose bucket has refilled completely: they carry no state.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  consume(key: string, policy: RatePolicy): RateDecision {
    const now = this.now();
    const { decision, newTat } = gcraDecide(this.tats.get(key), now, policy);
    if (newTat !== undefined) this.tats.set(key, newTat);
    this.onDecision?.(decision.allowed);
    return decision;
  }

  sweep(): void {
    const now = this.now();
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
