// dispatchEvents: the live event stream of order changes (GET /api/events), for the web console and API
// clients alike. Server-Sent Events over REST (one page of JSON to a client that asks for JSON); the same
// event types and envelope as the webhooks, for every change of an order whether it has a webhook
// recipient or not, each scoped to the key exactly as the reads are: an account's key its own orders, a
// contractor's key its offers and jobs (and the events that take one away from it), the dispatch team's
// key every order of its mode. `id` is the order event log's id: Last-Event-ID (or `after`) resumes
// exactly after it, as far back as the log keeps (WEBHOOK_RETENTION_DAYS). Events come in commit order;
// on PostgreSQL that is by transaction (storage/order-event-store.ts), so ids are unique and resume
// exactly, but a later event may have a smaller id than one before it.

import { z } from "zod";
import type { Principal } from "../../auth/api-key-service.js";
import { POOL_EVENT_TYPES, type PoolEventType } from "../../domain/pool-events.js";
import { type EventScope, LOG_START, type StoredOrderEvent } from "../../storage/order-event-store.js";
import { orderFromLogged } from "../../storage/order-rows.js";
import { WEBHOOK_EVENT_TYPES } from "../../webhooks/events.js";
import { defineOperation, principalOf } from "../kernel/operation.js";
import { jobView, offerView } from "./contractor-actions.js";
import { dispatcherOrderView } from "./dispatcher-actions.js";
import type { LoggedPayload } from "./event-log.js";
import { orderCoordinates, orderSummaryView, type ViewContext } from "./order-view.js";

const streamEventSchema = z
  .object({
    id: z
      .string()
      .describe(
        "The event's id, unique: resume after it with Last-Event-ID. Events come in commit order; ids " +
          "increase along it on the embedded store, and on PostgreSQL may not (transactions commit in any order).",
      ),
    type: z.enum([...WEBHOOK_EVENT_TYPES, ...POOL_EVENT_TYPES]),
    created_at: z.iso.datetime(),
    livemode: z.boolean(),
    data: z
      .record(z.string(), z.unknown())
      .describe(
        "As the webhook's data for an account's key (order, previous_status, ...), the order with its " +
          "approximate coordinates as dispatchOrderList shows them; the dispatch team's order carries " +
          "account_id and contractor_id instead of a contractor_ref; a contractor's key " +
          "gets order_id, previous_status, held (whether the job is offered to you or yours after the " +
          "event), and the offer or the job as contractorOffers and contractorJobs show them, or null; and, " +
          "for a service-level event (order.sla_at_risk, order.sla_breached) on a job it holds, sla. " +
          "pool.compliance_expiring (the dispatch team's stream only, once a UTC day): the day's list of " +
          "the pool's contractors not compliant or expiring within 45 days, as the audit record of that " +
          "kind holds it (pool, day, counts, contractors) with its seal. pool.contractor_changed (the " +
          "dispatch team's stream only): a contractor's time off was added or removed, it was " +
          "activated, deactivated, excluded or included, or the pool was imported: change (the audit " +
          "record's kind), contractor_id (null for an import) and the record's seal.",
      ),
  })
  .meta({ id: "StreamEvent" });

export type StreamEvent = z.infer<typeof streamEventSchema>;

const isPoolEvent = (type: string): type is PoolEventType =>
  (POOL_EVENT_TYPES as readonly string[]).includes(type);

/** The events a key may see. */
function scopeOf(principal: Principal): EventScope {
  if (principal.kind === "dispatcher") return { livemode: principal.livemode };
  if (principal.kind === "contractor") {
    if (principal.contractorId === null) throw new Error("a contractor key without its contractor");
    return { livemode: principal.livemode, contractorId: principal.contractorId };
  }
  return { livemode: principal.livemode, accountId: principal.accountId };
}

/** One logged event as `principal` sees it. */
export function eventView(row: StoredOrderEvent, principal: Principal, at: ViewContext): StreamEvent {
  if (isPoolEvent(row.type)) {
    // Only the dispatch team's scope matches a row without order or account (scopeOf, inScope).
    if (principal.kind !== "dispatcher") throw new Error("a pool event outside the dispatch team's scope");
    return {
      id: String(row.id),
      type: row.type,
      created_at: row.created_at,
      livemode: row.livemode === 1,
      data: JSON.parse(row.payload) as Record<string, unknown>,
    };
  }
  const payload = JSON.parse(row.payload) as LoggedPayload;
  const order = orderFromLogged(payload.order);
  const envelope = {
    id: String(row.id),
    type: row.type as StreamEvent["type"],
    created_at: row.created_at,
    livemode: row.livemode === 1,
  };
  if (principal.kind === "account") {
    const view = { ...orderSummaryView(order, at), ...orderCoordinates(order) };
    return { ...envelope, data: { order: view, ...payload.details } };
  }
  if (principal.kind === "dispatcher") {
    // No contractor_ref: an account's handle beside the contractor's id would link the two.
    const view = {
      ...dispatcherOrderView(order, at, new Date(row.created_at), payload.offer?.deadline_at ?? null),
      contractor_ref: null,
    };
    return { ...envelope, data: { order: view, ...payload.details } };
  }
  // A contractor: of a job taken away from it, only that it is no longer its own.
  const held = order.contractor_id === principal.contractorId;
  const offered = held && order.status === "offered";
  return {
    ...envelope,
    data: {
      order_id: order.id,
      previous_status: payload.details.previous_status,
      held,
      offer: offered && payload.offer ? offerView(payload.offer, order) : null,
      job: held && !offered ? jobView(order) : null,
      // A service-level event tells the contractor holding the job which clock and how late.
      ...(held && payload.details.sla ? { sla: payload.details.sla } : {}),
    },
  };
}

const PAGE_LIMIT = 500;

export const eventsOperation = defineOperation({
  id: "dispatchEvents",
  name: "dispatch.events",
  summary: "Stream order events",
  description:
    "Server-Sent Events (text/event-stream) of every change of the orders your key may see: an account's " +
    "key its own orders, a contractor's key its offers and jobs, the dispatch team's key every order of " +
    "its mode, in commit order. Each event has `id:` (unique), `event:` (the type, as the webhooks') and " +
    "`data:` (the event as JSON). Send Last-Event-ID (or `after`) to resume after an event, as far back as " +
    "events are kept (the webhook retention: an id no longer kept resumes at the oldest event kept); a comment line every 15 s keeps the connection open. Once the key is " +
    "revoked or the console session has ended, a last `stream.closed` event (no id; its data the 401 " +
    "problem document) ends the stream. At most a few " +
    "streams per key at once (429 beyond). A request that accepts only application/json gets one page of " +
    "events after `after` instead. REST only: not an MCP tool or A2A skill.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/events", input: "query" },
  input: z.object({
    after: z
      .string()
      .max(15, "after must be an event id")
      .regex(/^\d{1,15}$/, "after must be an event id")
      .optional()
      .describe("Events after this id (what Last-Event-ID says, which takes precedence)."),
    limit: z.coerce.number().int().min(1).max(PAGE_LIMIT).default(100).describe("JSON page size."),
  }),
  output: z.object({
    events: z.array(streamEventSchema),
    last_event_id: z.string().nullable().describe("Where the next page starts: pass it as `after`."),
  }),
  example: { after: "0" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const log = ctx.services.store.orderEvents;
    const from = input.after === undefined ? LOG_START : await log.resume(Number(input.after));
    const { rows } = await log.after(from, input.limit, scopeOf(principal));
    const last = rows[rows.length - 1];
    return {
      events: rows.map((row) => eventView(row, principal, ctx)),
      last_event_id: last ? String(last.id) : (input.after ?? null),
    };
  },
  async stream(ctx, input, sink) {
    const principal = principalOf(ctx);
    return ctx.services.events.subscribe(
      scopeOf(principal),
      input.after === undefined ? null : Number(input.after),
      (row) => {
        const event = eventView(row, principal, ctx);
        sink.send(event.id, event.type, event);
      },
    );
  },
});
