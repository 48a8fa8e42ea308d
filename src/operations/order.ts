// dispatchOrder: creates a durable work order and auto-matches a contractor. Idempotent: with a caller's key
// the order's response is stored under it in the order's own transaction (idempotency.ts).

import { z } from "zod";
import { sealRecord } from "../audit/record.js";
import { type OrderStatus, transition } from "../domain/lifecycle.js";
import type { RankedCandidate } from "../domain/matching.js";
import { newSortableId } from "../ids.js";
import { offerNext } from "../services/lifecycle.js";
import type { OrdersTable } from "../storage/schema.js";
import { statusEventType } from "../webhooks/events.js";
import { checkWebhookUrl } from "../webhooks/targets.js";
import { matchDecision, sealRef } from "./audit-decisions.js";
import { matchJob, resolveJob } from "./job.js";
import { orderSchema, orderView } from "./order-view.js";
import { nteSchema, orderLocationSchema, tradeSchema, urgencySchema } from "./schemas.js";
import { defineOperation, principalOf } from "./types.js";

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

export const orderOperation = defineOperation({
  id: "dispatchOrder",
  name: "dispatch.order",
  summary: "Create a work order",
  description:
    "Creates a durable work order and automatically matches the best eligible contractor from the active " +
    "pool. Returns the order id, the masked contractor handle and a status URL. Send an idempotency key to " +
    "retry safely. When no contractor is eligible the order is still created with status " +
    "needs_dispatcher.",
  access: "key",
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
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { services } = ctx;
    if (input.callback_url !== undefined)
      checkWebhookUrl(input.callback_url, "callback_url", principal.livemode, services.config);

    // The contractor whose capacity this request holds until its order is written.
    let reserved: string | null = null;
    try {
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
          data: {
            input: ctx.rawInput,
            idempotency_key: ctx.idempotency?.key ?? null,
            reference_id: row.reference_id,
          },
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
        // Idempotency: the key is claimed with this response in the order's transaction. Lost, another
        // process stored the key first: its order stands, ours is not written.
        if (ctx.idempotency && !(await ctx.idempotency.claim(tx, view, row.id))) {
          if (chosen) await tx.releaseContractor(chosen.contractor.id);
          return null;
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
      // Only a lost idempotency claim writes nothing: the gate answers with the winner's response.
      if (written === null) return null as never;
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
    }
  },
});
