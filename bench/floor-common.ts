// What the two floors of the order benchmark share (floor-server.ts, product-floor-server.ts), so that
// they differ only in what they write: the request's JSON schema (Fastify compiles it, as the floor has
// always validated), the price table and the pool's contractors by (trade, state), picked in turn.

import { type JobPrice, modelJobPrice, URGENCIES, type Urgency } from "../src/domain/pricing.js";
import { generateSandboxPool, type SandboxContractor } from "../src/domain/sandbox-pool.js";
import { TRADE_CODES, type TradeCode } from "../src/domain/trades.js";
import { STATE_CODES, type StateCode } from "../src/domain/us-regions.js";
import { SIMULATED_POOL_SEED } from "../src/sim/simulation.js";

/** The order request, validated as the floor always has: Fastify's compiled JSON schema. */
export const orderBody = {
  type: "object",
  additionalProperties: false,
  required: ["trade", "location", "description"],
  properties: {
    trade: { type: "string", enum: [...TRADE_CODES] },
    location: {
      type: "object",
      additionalProperties: false,
      required: ["state"],
      properties: {
        state: { type: "string", enum: [...STATE_CODES] },
        zip: { type: "string", maxLength: 10, pattern: "^\\d{5}(-\\d{4})?$" },
        city: { type: "string", maxLength: 255 },
        address: { type: "string", maxLength: 1000 },
        name: { type: "string", maxLength: 500 },
      },
    },
    description: { type: "string", minLength: 1, maxLength: 5000, pattern: "\\S" },
    urgency: { type: "string", enum: [...URGENCIES], default: "routine" },
    nte_cents: { type: "integer", minimum: 1, maximum: 2_147_483_647 },
    reference_id: { type: "string", maxLength: 255 },
  },
} as const;

export interface OrderBody {
  trade: TradeCode;
  location: { state: StateCode; zip?: string; city?: string; address?: string; name?: string };
  description: string;
  urgency: Urgency;
  nte_cents?: number;
  reference_id?: string;
}

/** Every (trade, state, urgency) priced once, at start. */
export const prices = new Map<string, JobPrice>();
for (const trade of TRADE_CODES)
  for (const state of STATE_CODES)
    for (const urgency of URGENCIES)
      prices.set(`${trade}|${state}|${urgency}`, modelJobPrice(trade, state, urgency));

/** The contractors' ids by (trade, state): the pool the service benchmark imports. */
export const buckets = new Map<string, string[]>();
/** The same contractors by id. */
export const contractorsById = new Map<string, SandboxContractor>();
for (const c of generateSandboxPool(new Date(), SIMULATED_POOL_SEED)) {
  contractorsById.set(c.id, c);
  for (const trade of c.trades)
    for (const state of c.states) {
      const key = `${trade}|${state}`;
      const list = buckets.get(key) ?? [];
      list.push(c.id);
      buckets.set(key, list);
    }
}
