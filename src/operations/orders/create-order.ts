// dispatchOrder: creates a durable work order and auto-matches a contractor. Idempotent: with a caller's key
// the order's response is stored under it in the order's own transaction (idempotency.ts).

import { z } from "zod";
import type { Commitment } from "../../domain/commitments.js";
import type { MatchResult, RankedCandidate } from "../../domain/matching.js";
import { type CreateOrder, createOrder } from "../../domain/orders/commands.js";
import type { Order, Refusal } from "../../domain/orders/order.js";
import { RECALL_WINDOW_DAYS, recallFirst, recallRefusal } from "../../domain/orders/recall.js";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import { checkWebhookUrl } from "../../webhooks/targets.js";
import { defineOperation, type OperationContext, principalOf, type Services } from "../kernel/operation.js";
import {
  locationOrSite,
  type NamedSite,
  orderSiteShape,
  orderSiteView,
  resolveNamedSite,
} from "../kernel/order-site.js";
import {
  nteSchema,
  orderLocationSchema,
  serviceWindowSchema,
  tradeSchema,
  urgencySchema,
} from "../kernel/schemas.js";
import { nextFreeWindows, timedMatch, windowView } from "../matching/availability.js";
import { matchDecision, sealRef } from "../matching/decision-records.js";
import {
  accountJob,
  cascadeCandidates,
  type JobTime,
  type ResolvedJob,
  resolveJob,
  resolveJobTime,
} from "../matching/job.js";
import { type Committed, tryOrderCommand } from "./command-runner.js";
import { recordDispatchLatency } from "./dispatch-latency.js";
import { type OrderView, orderSchema, orderView } from "./order-view.js";

const orderInput = z
  .strictObject({
    trade: tradeSchema,
    location: orderLocationSchema
      .optional()
      .describe("Where the work is; may be left out when site_id names one of your sites."),
    ...orderSiteShape,
    description: z
      .string({
        error: (iss) => `description ${iss.input === undefined ? "is required" : "must be a string"}`,
      })
      .min(1, { error: "description must not be empty" })
      .max(5000, { error: "description must be at most 5000 characters" })
      .refine((s) => s.trim().length > 0, { error: "description must not be blank" }),
    urgency: urgencySchema,
    nte_cents: nteSchema.optional(),
    callback_url: z
      .url({ protocol: /^https?$/, error: "callback_url must be an absolute http(s) URL" })
      .max(2048, { error: "callback_url must be at most 2048 characters" })
      .optional(),
    reference_id: z.string().max(255, { error: "reference_id must be at most 255 characters" }).optional(),
    service_window: serviceWindowSchema.optional(),
    recall_of: z
      .string({ error: "recall_of must be an order id (ord_...)" })
      .min(1, { error: "recall_of must not be empty" })
      .max(64, { error: "recall_of must be at most 64 characters" })
      .optional()
      .describe(
        "Makes this order a recall: a callback for a job that did not hold. The id (ord_...) of an earlier " +
          "order of yours (same key mode) of the same trade, at the same site (until sites exist: the same " +
          "state, and the same address when both orders give one, else the same ZIP), completed no more " +
          `than ${RECALL_WINDOW_DAYS} days ago and not cancelled; otherwise 422 with field recall_of and ` +
          "the rule it breaks. Counted in the evals' first_time_fix_rate and recall_rate.",
      ),
  })
  // Runs whatever else is wrong, so a body missing both names location with its other faults.
  .superRefine(locationOrSite, { when: () => true })
  .meta({ id: "OrderRequest" });

export const orderOperation = defineOperation({
  id: "dispatchOrder",
  name: "dispatch.order",
  summary: "Create a work order",
  description:
    "Creates a durable work order and automatically matches the best eligible contractor from the active " +
    "pool. Returns the order id, the masked contractor handle, a status URL, the job's time zone and the time " +
    "promised (arrival window, or respond_by and arrive_by). Send an idempotency key to " +
    "retry safely. When no contractor is eligible the order is still created with status " +
    "needs_dispatcher, except for an order naming a service_window: that answers 409 window_unavailable " +
    "with the next free windows (`alternatives`, as dispatch.availability gives them) and creates nothing. " +
    "site_id names one of your sites instead of a location (and asset_ids the assets the work is for): " +
    "the order's location, and its view's `site`, come from it.",
  access: "key",
  onServerKey: true,
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/order", input: "body" },
  problems: [409],
  idempotent: true,
  input: orderInput,
  output: orderSchema,
  example: {
    trade: "plumbing",
    location: { state: "TX", zip: "78701", address: "500 Congress Ave", name: "Store #42" },
    description: "Kitchen sink leaking under the cabinet",
    urgency: "urgent",
    nte_cents: 45000,
    reference_id: "WO-1042",
  },
  async handler(ctx, given) {
    const principal = principalOf(ctx);
    const { services } = ctx;
    const named = await resolveNamedSite(services.store, principal, given);
    const input = { ...given, location: named.location };
    if (input.callback_url !== undefined)
      checkWebhookUrl(input.callback_url, "callback_url", principal.livemode, services.config);
    const recalled = input.recall_of === undefined ? null : await checkRecall(services, input, principal);
    const matched = await matchOrder(services, input, principal, recalled?.contractor_id ?? null);
    // The caller named a window no contractor can take any more (it filled since availability, or was
    // never free): say so with the next free ones, rather than queue the order for a dispatcher.
    if (matched.time.window !== null && matched.candidates.length === 0)
      throw windowUnavailable(services, matched, principal.livemode);
    const id = newSortableId("ord");
    const hold = holdTentatively(services, id, matched);
    const command = creation(ctx, input, id, matched);
    const { outcome, view } = await commitOrder(ctx, command, matched, hold, named);
    // Only a lost idempotency claim writes nothing: the gate answers with the winner's response.
    if (outcome.kind === "lost") return null as never;
    if (outcome.kind === "refused" && outcome.code === "window_unavailable")
      throw windowUnavailable(services, matched, principal.livemode);
    if (outcome.kind === "refused" || view === undefined) throw new Error("order creation was refused");
    // The runner returns once the group commit is durable: the first offer, if any, is committed now.
    if (outcome.change.offers.create.length > 0) {
      recordDispatchLatency(services, id, Number(process.hrtime.bigint() - ctx.receivedHr) / 1e6);
    }
    return view;
  },
});

/** The order's input with its location resolved (from its site when it names one). */
type OrderInput = Omit<z.infer<typeof orderInput>, "location"> & { location: NamedSite["location"] };

/** The order a recall names, or a refusal (422, field recall_of, the rule broken as its code) when the
 * order cannot be a recall of it (domain/orders/recall.ts). Read outside the order's transaction: the order
 * named is completed, which it stays (a completed order is never cancelled, nor its completion moved). */
async function checkRecall(
  services: Services,
  input: OrderInput,
  principal: { accountId: string; livemode: boolean },
): Promise<Order> {
  const id = input.recall_of as string;
  const original = (await services.store.orders.byId(id)) ?? null;
  const refusal = recallRefusal(id, original, {
    account_id: principal.accountId,
    livemode: principal.livemode,
    trade: input.trade,
    state: input.location.state,
    zip: input.location.zip ?? null,
    address: input.location.address ?? null,
    at: services.now().toISOString(),
  });
  if (refusal !== null) {
    throw new ApiError("validation_failed", `recall_of: ${refusal.message}`, {
      errors: [{ field: "recall_of", code: refusal.rule, message: refusal.message }],
    });
  }
  return original as Order; // recallRefusal refuses an order that is not there
}

/** The job the request describes, matched against the pool. */
interface MatchedOrder {
  job: ResolvedJob;
  /** The job's time zone and window (for scheduled work without one, the earliest the pool can serve). */
  time: JobTime;
  result: MatchResult;
  /** The cascade's candidates, best first. */
  candidates: RankedCandidate[];
  /** How long the in-memory match took, in milliseconds. */
  matchingTimeMs: number;
  /** A recall offered first to the contractor of the job it recalls (domain/orders/recall.ts recallFirst). */
  recallFirst: boolean;
}

async function matchOrder(
  services: Services,
  input: OrderInput,
  { accountId, livemode }: { accountId: string; livemode: boolean },
  /** For a recall, the contractor of the job it recalls: offered the job first when it is a candidate. */
  recallContractor: string | null,
): Promise<MatchedOrder> {
  const requestedAt = services.now();
  const requested = resolveJobTime(input, requestedAt);
  const resolved = await accountJob(services, resolveJob(input, requestedAt), accountId, livemode);
  const matchStartHr = process.hrtime.bigint();
  // Scheduled work without a window is matched into the earliest window the pool can serve.
  const { job, time, result } = timedMatch(services, resolved, requested, livemode, requestedAt);
  const matchingTimeMs = Number(process.hrtime.bigint() - matchStartHr) / 1e6;
  const ranked = await cascadeCandidates(services, job, livemode, result);
  const candidates = recallFirst(ranked, recallContractor);
  if (candidates === ranked)
    return { job, time, result, candidates: ranked, matchingTimeMs, recallFirst: false };
  // The scores stay the evidence (result.ranked); the one offered first is the original's contractor.
  const first = { ...result, chosen: candidates[0] ?? null };
  return { job, time, result: first, candidates: [...candidates], matchingTimeMs, recallFirst: true };
}

/** The 409 of a window no contractor can take any more, with the next free ones. */
function windowUnavailable(services: Services, matched: MatchedOrder, livemode: boolean): ApiError {
  const { job, time } = matched;
  const window = time.window as NonNullable<typeof time.window>;
  const next = nextFreeWindows(services, job, time.timeZone, window, livemode, services.now());
  return new ApiError(
    "window_unavailable",
    "No eligible contractor can take the job in service_window any more: name one of `alternatives` " +
      "(POST /api/dispatch/v1/availability lists more).",
    {
      errors: [
        { field: "service_window", code: "window_unavailable", message: "window no longer available" },
      ],
      extra: { time_zone: time.timeZone, alternatives: next.map(windowView) },
    },
  );
}

/** The best candidate counted as busy in this process until the order commits. */
interface TentativeHold {
  tentative: string | null;
  tentativeBlock: Commitment | null;
}

/** Counts the best candidate as busy in this process now, in the same tick as the match, so that
 * concurrent orders of this process look further down; the store's capacity decides at commit. */
function holdTentatively(services: Services, orderId: string, matched: MatchedOrder): TentativeHold {
  const { job, result } = matched;
  const tentative = result.chosen?.contractor.id ?? null;
  const durationMs = (job.time?.durationMinutes ?? 0) * 60_000;
  const startAt = result.chosen?.startAt ?? null;
  const tentativeBlock =
    tentative !== null && startAt !== null
      ? { orderId, start: startAt, end: startAt + durationMs, point: job.point }
      : null;
  if (tentative !== null) services.pool.index.addJob(tentative);
  if (tentative !== null && tentativeBlock !== null) services.pool.index.hold(tentative, tentativeBlock);
  return { tentative, tentativeBlock };
}

/** The domain's creation command: what the caller asked for and what the match found. */
function creation(ctx: OperationContext, input: OrderInput, id: string, matched: MatchedOrder): CreateOrder {
  const principal = principalOf(ctx);
  const { job, time, result, candidates } = matched;
  const request: CreateOrder["request"] = {
    id,
    account_id: principal.accountId,
    livemode: principal.livemode,
    trade: job.trade,
    urgency: job.urgency,
    state: job.state,
    zip: input.location.zip ?? null,
    city: input.location.city ?? null,
    address: input.location.address ?? null,
    location_name: input.location.name ?? null,
    description: input.description,
    nte_cents: job.nteCents,
    callback_url: input.callback_url ?? null,
    reference_id: input.reference_id ?? null,
    recall_of: input.recall_of ?? null,
    received_at: ctx.receivedAt.toISOString(),
    created_at: ctx.services.now().toISOString(),
  };
  return {
    request,
    candidates: candidates.map((c) => ({
      contractorId: c.contractor.id,
      priceCents: c.price.total_cents,
      etaTier: c.etaTier,
      score: c.score,
    })),
    modelPriceCents: job.modelPrice.total_cents,
    matchingTimeMs: matched.matchingTimeMs,
    actor: ctx.actingAs ?? `key:${principal.keyId}`,
    // Sealed with the caller's contact details and bookkeeping as disclosures (audit/redaction.ts).
    createdData: {
      input: ctx.rawInput,
      idempotency_key: ctx.idempotency?.key ?? null,
      reference_id: request.reference_id,
      // The recall link, stated beside the input for a reader of the record (only on a recall: the
      // records of other orders keep their shape).
      ...(request.recall_of === null ? {} : { recall_of: request.recall_of }),
    },
    // recall_first: the job was offered first to the contractor of the job it recalls, whatever its rank.
    decisionData: { ...matchDecision(result), ...(matched.recallFirst ? { recall_first: true } : {}) },
    time,
  };
}

/** Decides and commits the order; `view` is the answer, built once the capacity is secured (and stored
 * under the caller's idempotency key in the same transaction). */
async function commitOrder(
  ctx: OperationContext,
  command: CreateOrder,
  matched: MatchedOrder,
  hold: TentativeHold,
  named: NamedSite,
): Promise<{ outcome: Committed | Refusal | { kind: "lost" }; view: OrderView | undefined }> {
  const { time, job, candidates } = matched;
  const id = command.request.id;
  let view: OrderView | undefined;
  const outcome = await tryOrderCommand(
    ctx.services,
    // A new order: nobody else can lock it; the contractor it is first offered to.
    { contractors: [hold.tentative] },
    async () => null,
    (_none, commandCtx) =>
      // Every candidate's capacity went to concurrent orders before this one committed.
      time.window !== null && command.candidates.every((c) => commandCtx.unavailable.has(c.contractorId))
        ? { kind: "refused", code: "window_unavailable", message: "window filled" }
        : createOrder(command, commandCtx),
    {
      ...hold,
      // The job's place and the starts the match found: the writer places the job with them.
      timing: {
        strict: true,
        point: job.point,
        starts: new Map(
          candidates.flatMap((c) => (c.startAt === null ? [] : [[c.contractor.id, c.startAt] as const])),
        ),
      },
      guard: async (tx, { change, audit }) => {
        view = orderView(
          change.after,
          ctx,
          audit.map((a) => sealRef(ctx.baseUrl, a.seal, a.kind, a.created_at)),
          [],
          // A new order has no counter-offer yet: its answer reads as its status does.
          null,
          named.site === null ? null : orderSiteView(named.site, named.assets, ctx.services.now(), true),
        );
        // Another process stored this key first: its order stands, ours is not written.
        const won = ctx.idempotency ? await ctx.idempotency.claim(tx, view, id) : true;
        // Only an order naming a site writes its rows (order_sites, order_assets): others nothing more.
        if (won && named.site !== null) {
          await ctx.services.store.sites.nameOnOrder(
            id,
            named.site.id,
            named.assets.map((a) => a.id),
            tx,
          );
        }
        return won;
      },
    },
  );
  return { outcome, view };
}
