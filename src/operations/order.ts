// dispatchOrder: creates a durable work order and auto-matches a contractor. Honours Idempotency-Key:
// same key and body replays the first response, a different body is refused, a concurrent retry gets 409.

import { createHash } from "node:crypto";
import { z } from "zod";
import { sealRecord } from "../audit/record.js";
import { canonicalJson } from "../canonical-json.js";
import { type OrderStatus, transition } from "../domain/lifecycle.js";
import type { RankedCandidate } from "../domain/matching.js";
import { ApiError } from "../errors.js";
import { newSortableId } from "../ids.js";
import { offerNext } from "../services/lifecycle.js";
import type { IdempotencyKeysTable, OrdersTable } from "../storage/schema.js";
import { statusEventType } from "../webhooks/events.js";
import { checkWebhookUrl } from "../webhooks/targets.js";
import { matchDecision, sealRef } from "./audit-decisions.js";
import { matchJob, resolveJob } from "./job.js";
import { orderSchema, orderView } from "./order-view.js";
import { nteSchema, orderLocationSchema, tradeSchema, urgencySchema } from "./schemas.js";
import { defineOperation, type OperationContext, principalOf } from "./types.js";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const orderInput = z
  .strictObject({
    trade: tradeSchema,
    location: orderLocationSchema,
    description: z
      .string({ error: "description is required" })
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
  })
  .meta({ id: "OrderRequest" });

function fingerprint(raw: unknown): string {
  return createHash("sha256").update(canonicalJson(raw)).digest("hex");
}

function replay(ctx: OperationContext, record: IdempotencyKeysTable, hash: string): unknown {
  if (record.request_hash !== hash) {
    throw new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used with a different request body; use a new key for a new order.",
      { errors: [{ field: "Idempotency-Key", message: "already used with a different request body" }] },
    );
  }
  ctx.setHeader("Idempotent-Replayed", "true");
  return JSON.parse(record.response_body);
}

export const orderOperation = defineOperation({
  id: "dispatchOrder",
  name: "dispatch.order",
  summary: "Create a work order",
  description:
    "Creates a durable work order and automatically matches the best eligible contractor from the active " +
    "pool. Returns the order id, the masked contractor handle and a status URL. Send an Idempotency-Key " +
    "header to retry safely. When no contractor is eligible the order is still created with status " +
    "needs_dispatcher.",
  access: "key",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/order", input: "body" },
  problems: [409],
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
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { services } = ctx;
    if (input.callback_url !== undefined)
      checkWebhookUrl(input.callback_url, "callback_url", principal.livemode, services.config);
    const idemKey = ctx.idempotencyKey;
    // The body's fingerprint is needed only to compare retries that carry an Idempotency-Key.
    const hash = idemKey === undefined ? "" : fingerprint(ctx.rawInput);
    const scope = `${principal.accountId}|${principal.livemode ? 1 : 0}|${idemKey}`;

    if (idemKey !== undefined) {
      if (!IDEMPOTENCY_KEY_PATTERN.test(idemKey)) {
        throw new ApiError("invalid_request", "Idempotency-Key must be 1-255 visible ASCII characters.", {
          errors: [{ field: "Idempotency-Key", message: "must be 1-255 visible ASCII characters" }],
        });
      }
      if (services.inflightIdempotency.has(scope)) {
        throw new ApiError(
          "idempotency_request_in_progress",
          "A request with this Idempotency-Key is still being processed; retry shortly.",
        );
      }
      // Marked in flight before the first await, so a concurrent retry in this process sees it.
      services.inflightIdempotency.add(scope);
    }

    // The contractor whose capacity this request holds until its order is written.
    let reserved: string | null = null;
    try {
      if (idemKey !== undefined) {
        const existing = await services.store.findIdempotency(
          principal.accountId,
          principal.livemode,
          idemKey,
          services.now().toISOString(),
        );
        if (existing) return replay(ctx, existing, hash) as never;
      }
      const job = resolveJob(input);
      const result = matchJob(services, job, principal.livemode);
      const matchedHr = process.hrtime.bigint();
      // Take the best candidate's capacity in memory now, in the same tick as the match, so concurrent
      // orders of this process see it; the store's conditional reservation below is the authority
      // across processes. Given back if the order ends up elsewhere or is not written.
      if (result.chosen) {
        services.pool.index.addJob(result.chosen.contractor.id);
        reserved = result.chosen.contractor.id;
      }
      const now = services.now();
      const nowIso = now.toISOString();
      const id = newSortableId("ord");
      // The cascade's order: the ranked candidates, best first.
      const ranking = result.ranked.map((c) => c.contractor.id);
      const build = (chosen: RankedCandidate | null): OrdersTable => ({
        id,
        account_id: principal.accountId,
        livemode: principal.livemode ? 1 : 0,
        status: transition("received", chosen ? "offer" : "no_candidate", "system"),
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
        contractor_id: chosen?.contractor.id ?? null,
        estimated_cost_cents: (chosen?.price ?? job.modelPrice).total_cents,
        currency: "USD",
        eta_tier: chosen?.etaTier ?? null,
        match_score: chosen?.score ?? null,
        received_at: ctx.receivedAt.toISOString(),
        matched_at: chosen ? nowIso : null,
        dispatch_latency_ms: chosen ? Number(matchedHr - ctx.receivedHr) / 1e6 : null,
        created_at: nowIso,
        updated_at: nowIso,
        ranking: JSON.stringify(ranking),
        accepted_at: null,
        eta_at: null,
        completed_at: null,
        final_cost_cents: null,
        status_reason: null,
        nte_approved_cents: null,
        invoice_cents: null,
        invoiced_at: null,
      });
      const written = await services.store.write(async (tx) => {
        // The job is offered to the best-ranked candidate that still has capacity in the store.
        const next = await offerNext(
          tx,
          { id, livemode: principal.livemode ? 1 : 0, urgency: job.urgency },
          ranking,
          new Set(),
          1,
          now,
          services.config.SANDBOX_SIMULATION,
        );
        const offer = next.status === "offered" ? next.offer : null;
        const chosen = offer
          ? (result.ranked.find((c) => c.contractor.id === offer.contractor_id) ?? null)
          : null;
        const row = build(chosen);
        const actor = `key:${principal.keyId}` as const;
        const common = { accountId: principal.accountId, livemode: principal.livemode, orderId: id, actor };
        const created = sealRecord({
          ...common,
          kind: "order.created",
          at: row.received_at,
          data: { input: ctx.rawInput, idempotency_key: idemKey ?? null, reference_id: row.reference_id },
        });
        const decided = sealRecord({
          ...common,
          kind: chosen ? "order.matched" : "order.unmatched",
          at: nowIso,
          data: {
            status: row.status,
            chosen: chosen?.contractor.id ?? null,
            offer_deadline_at: offer?.deadline_at ?? null,
            estimated_cost_cents: row.estimated_cost_cents,
            model_price_cents: job.modelPrice.total_cents,
            dispatch_latency_ms: row.dispatch_latency_ms,
            ...matchDecision(result),
          },
        });
        const view = orderView(row, ctx.baseUrl, [
          sealRef(ctx.baseUrl, created.seal, created.kind, created.created_at),
          sealRef(ctx.baseUrl, decided.seal, decided.kind, decided.created_at),
        ]);
        if (idemKey !== undefined) {
          const claimed = await tx.claimIdempotency(
            {
              account_id: principal.accountId,
              livemode: row.livemode,
              idem_key: idemKey,
              request_hash: hash,
              response_status: 200,
              response_body: JSON.stringify(view),
              order_id: row.id,
              created_at: nowIso,
              expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
            },
            nowIso,
          );
          // Another process stored this key first: its order stands, ours is not written.
          if (!claimed) {
            if (chosen) await tx.releaseContractor(chosen.contractor.id);
            return null;
          }
        }
        await tx.insertOrder(row);
        if (offer) tx.insertOffer(offer);
        services.lifecycle.notify(tx, row, statusEventType(row.status as OrderStatus), nowIso, {
          previous_status: "received",
        });
        tx.appendAudit(created);
        tx.appendAudit(decided);
        return { row, view };
      });
      if (written === null) {
        // Only a lost idempotency claim writes nothing: answer with the winner's response.
        const winner = await services.store.findIdempotency(
          principal.accountId,
          principal.livemode,
          idemKey as string,
          nowIso,
        );
        if (!winner) throw new Error("idempotency record vanished after a conflict");
        return replay(ctx, winner, hash) as never;
      }
      const holder = written.row.contractor_id;
      if (holder !== reserved) {
        if (reserved !== null) services.pool.index.releaseJob(reserved);
        if (holder !== null) services.pool.index.addJob(holder);
      }
      reserved = null; // the order holds the job now
      if (written.row.dispatch_latency_ms !== null) {
        services.metrics.dispatchLatency.observe(written.row.dispatch_latency_ms / 1000);
      }
      return written.view;
    } finally {
      if (reserved !== null) services.pool.index.releaseJob(reserved);
      if (idemKey !== undefined) services.inflightIdempotency.delete(scope);
    }
  },
});
