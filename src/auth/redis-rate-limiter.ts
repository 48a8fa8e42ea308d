// The shared rate limiter: GCRA in one Lua script on Redis, so every process of a deployment spends
// from the same buckets. The script is loaded once (EVALSHA, reloaded by the client on NOSCRIPT), takes
// its clock from Redis TIME rather than the callers', and decides in one round trip.
//
// Failure policy: when Redis does not answer (down, unreachable, slower than REDIS_TIMEOUT_MS), each
// process decides with its own in-memory GCRA under the same policy, so a fleet of N processes admits
// up to N times the limit during the outage; requests keep being answered. Every switch between the
// two is logged, and decisions made in fallback are counted. When Redis answers again, the shared
// buckets take over (they start from where they were left).

import { Redis } from "ioredis";
import { MemoryRateLimiter, type RateDecision, type RateLimiter, type RatePolicy } from "./rate-limiter.js";

const GCRA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local capacity = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local candidate = tat + interval
if candidate - now <= capacity then
  redis.call('SET', KEYS[1], string.format('%.3f', candidate), 'PX', math.ceil(candidate - now) + 1000)
  return {1, math.floor((capacity - (candidate - now)) / interval), math.ceil((candidate - now) / 1000), 0}
end
return {0, 0, math.ceil((tat - now) / 1000), math.max(1, math.ceil((candidate - capacity - now) / 1000))}
`;

type GcraReply = [number, number, number, number];

interface GcraClient extends Redis {
  gcra(key: string, intervalMs: string, burst: string): Promise<GcraReply>;
}

export interface LimiterEvents {
  /** Redis stopped answering: decisions fall back to memory. */
  onFallback?(error: unknown): void;
  /** Redis answers again: decisions are shared again. */
  onRecovered?(): void;
  /** Every decision, with where it was made. */
  onDecision?(source: "redis" | "memory", allowed: boolean): void;
}

export interface RedisLimiterOptions {
  keyPrefix?: string;
  /** A decision not answered within this time is made in memory instead. */
  timeoutMs?: number;
  events?: LimiterEvents;
}

export class RedisRateLimiter implements RateLimiter {
  readonly client: GcraClient;
  private readonly fallback = new MemoryRateLimiter();
  private readonly prefix: string;
  private readonly events: LimiterEvents;
  private degraded = false;

  constructor(url: string, options: RedisLimiterOptions = {}) {
    this.prefix = options.keyPrefix ?? "fsd:rl:";
    this.events = options.events ?? {};
    const client = new Redis(url, {
      // Fail fast instead of queueing while disconnected: the fallback answers meanwhile.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.timeoutMs ?? 100,
      lazyConnect: false,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }) as GcraClient;
    client.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA_LUA });
    // Connection errors are handled by falling back; ioredis reconnects by itself.
    client.on("error", () => {});
    client.on("ready", () => this.recover());
    this.client = client;
  }

  /** "redis" while decisions are shared, "memory" while falling back. */
  get mode(): "redis" | "memory" {
    return this.degraded ? "memory" : "redis";
  }

  async consume(key: string, policy: RatePolicy): Promise<RateDecision> {
    if (this.client.status === "ready") {
      try {
        const [allowed, remaining, resetSeconds, retryAfterSeconds] = await this.client.gcra(
          this.prefix + key,
          String(60_000 / policy.ratePerMinute),
          String(policy.burst),
        );
        this.events.onDecision?.("redis", allowed === 1);
        // After a timeout the connection stays "ready": a decision that succeeds is the recovery.
        this.recover();
        return { allowed: allowed === 1, limit: policy.burst, remaining, resetSeconds, retryAfterSeconds };
      } catch (error) {
        this.enterFallback(error);
      }
    } else {
      this.enterFallback(new Error(`redis is ${this.client.status}`));
    }
    const decision = this.fallback.consume(key, policy);
    this.events.onDecision?.("memory", decision.allowed);
    return decision;
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.events.onRecovered?.();
  }

  private enterFallback(error: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.events.onFallback?.(error);
  }

  /** Whether Redis answers (for readiness). */
  async ready(): Promise<boolean> {
    try {
      return (await this.client.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
    this.client.disconnect();
  }
}
