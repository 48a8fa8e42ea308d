// The contractor's side: its offers and jobs, accepting or declining an offer, reporting progress,
// asking for a higher NTE and invoicing.
// A contractor key sees only its own offers and jobs, and of a caller only what the job needs (where,
// what, the NTE; the street address once the job is accepted), never the account or its references.

import { z } from "zod";
import { counterDetails } from "../../domain/orders/counter-rules.js";
import { INVOICE_LIMITS, type InvoiceLineInput } from "../../domain/orders/invoice.js";
import type { Offer, Order } from "../../domain/orders/order.js";
import type { OrderStatus } from "../../domain/orders/statuses.js";
import { contractorOf, defineOperation } from "../kernel/operation.js";
import { orderSiteSchema, storedOrderSites } from "../kernel/order-site.js";
import { acceptOffer, declineOffer, invoice, reportProgress, requestNte } from "./command-runner.js";
import { counterSchema } from "./counter-view.js";
import { applyInvoicePolicy, invoiceLinesInput, itemisedOr422 } from "./invoices.js";
import {
  ORDER_STATUSES,
  orderServiceTimeShape,
  reportedPositionSchema,
  serviceTimeOf,
  siteChecksShape,
} from "./order-view.js";

const jobBase = {
  order_id: z.string(),
  trade: z.string(),
  urgency: z.string(),
  description: z.string(),
  location: z.object({ state: z.string(), zip: z.string().nullable(), city: z.string().nullable() }),
  nte_cents: z.number().int().nullable().describe("Not-to-exceed amount the caller set, if any."),
  estimated_cost_cents: z.number().int(),
  agreed_price_cents: z
    .number()
    .int()
    .nullable()
    .describe("The price of your counter-offer the account accepted; null when none was."),
  // When to be there: the window, or the urgency's respond_by and arrive_by.
  ...orderServiceTimeShape,
};

const contractorOfferSchema = z
  .object({
    offer_id: z.string(),
    attempt: z
      .number()
      .int()
      .describe("1 when you are the first contractor offered this job, 2 the next, ..."),
    offered_at: z.iso.datetime(),
    deadline_at: z.iso
      .datetime()
      .describe("Accept before this time, or the job goes to the next contractor."),
    counter: counterSchema
      .optional()
      .describe(
        "Your counter-offer, when you answered this offer with one: it waits on the account until its " +
          "deadline_at (the job stays yours meanwhile).",
      ),
    ...jobBase,
  })
  .meta({ id: "ContractorOffer" });

export const contractorJobSchema = z
  .object({
    ...jobBase,
    status: z.enum(ORDER_STATUSES),
    address: z.string().nullable(),
    location_name: z.string().nullable(),
    accepted_at: z.iso.datetime().nullable(),
    eta_at: z.iso.datetime().nullable(),
    ...siteChecksShape,
    booked: z
      .object({ start: z.iso.datetime(), end: z.iso.datetime() })
      .nullable()
      .optional()
      .describe(
        "In your list of jobs: the block of your time the job holds, on site from start until end (inside " +
          "the arrival window, or from when you can be there); null when it was placed without a time.",
      ),
    site: orderSiteSchema
      .nullable()
      .optional()
      .describe(
        "In your list of jobs: the account's site the job is at (its opening hours, access notes and " +
          "contact) and the assets it names, each with warranty_in_force (you may treat it as a warranty " +
          "call); null when it names none.",
      ),
  })
  .meta({ id: "ContractorJob" });

function job(order: Order) {
  return {
    order_id: order.id,
    trade: order.trade,
    urgency: order.urgency,
    description: order.description,
    location: { state: order.state, zip: order.zip, city: order.city },
    nte_cents: order.nte_cents,
    estimated_cost_cents: order.estimated_cost_cents,
    agreed_price_cents: order.agreed_price_cents,
    ...serviceTimeOf(order),
  };
}

/** An offer as its contractor sees it (of the offer, only what every copy of it holds, the event log's
 * too). */
export function offerView(offer: Pick<Offer, "id" | "attempt" | "offered_at" | "deadline_at">, order: Order) {
  return {
    offer_id: offer.id,
    attempt: offer.attempt,
    offered_at: offer.offered_at,
    deadline_at: offer.deadline_at,
    ...job(order),
  };
}

export function jobView(order: Order) {
  return {
    ...job(order),
    status: order.status,
    address: order.address,
    location_name: order.location_name,
    accepted_at: order.accepted_at,
    eta_at: order.eta_at,
    check_in: order.check_in,
    check_out: order.check_out,
  };
}

export const contractorOffersOperation = defineOperation({
  id: "contractorOffers",
  name: "contractor.offers",
  summary: "List your pending offers",
  description:
    "The jobs offered to you that wait for your answer, newest first, each with its deadline. Accept, " +
    "decline or counter before the deadline; after it, the job goes to the next contractor. Offers you " +
    "countered are listed too while the account has not answered, with your `counter`.",
  access: "contractor",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/contractor/v1/offers", input: "query" },
  input: z.strictObject({}),
  output: z.object({ offers: z.array(contractorOfferSchema) }).meta({ id: "ContractorOfferList" }),
  example: {},
  async handler(ctx) {
    const { store } = ctx.services;
    const { contractorId, livemode } = contractorOf(ctx);
    const [pending, countered] = await Promise.all([
      store.orders.offersOfContractor(contractorId, livemode, "pending", 200),
      store.orders.offersOfContractor(contractorId, livemode, "countered", 200),
    ]);
    // Of the countered offers, those whose counter still waits on the account.
    const waiting = new Map(
      (await store.counters.byOffers(countered.map((o) => o.id)))
        .filter((c) => c.status === "pending")
        .map((c) => [c.offer_id, c]),
    );
    const offers = [...pending, ...countered.filter((o) => waiting.has(o.id))].sort((a, b) =>
      b.offered_at.localeCompare(a.offered_at),
    );
    const orders = new Map((await store.orders.byIds(offers.map((o) => o.order_id))).map((o) => [o.id, o]));
    return {
      offers: offers.flatMap((o) => {
        const order = orders.get(o.order_id);
        const counter = waiting.get(o.id);
        return order
          ? [{ ...offerView(o, order), ...(counter ? { counter: counterDetails(counter) } : {}) }]
          : [];
      }),
    };
  },
});

/** The statuses each `status` of the contractor's job list stands for. */
const JOB_STATUSES: Record<"active" | "completed" | "invoiced", OrderStatus[]> = {
  active: ["accepted", "en_route", "on_site"],
  completed: ["completed"],
  invoiced: ["invoiced", "revision_requested", "invoice_rejected"],
};

export const contractorJobsOperation = defineOperation({
  id: "contractorJobs",
  name: "contractor.jobs",
  summary: "List your jobs",
  description:
    "The jobs you hold, newest first, with the address: by default the active ones (accepted, en route or " +
    "on site); with status=completed, the jobs you completed that still wait for your invoice; with " +
    "status=invoiced, the jobs whose invoice waits for the account's decision or for your revision " +
    "(invoiced, revision_requested, invoice_rejected).",
  access: "contractor",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/contractor/v1/jobs", input: "query" },
  input: z.strictObject({
    status: z
      .enum(["active", "completed", "invoiced"], { error: "status must be active, completed or invoiced" })
      .default("active")
      .describe(
        "active (the default): accepted, en route or on site; completed: waiting for your invoice; " +
          "invoiced: your invoice waits for a decision, or was sent back for a revision or rejected.",
      ),
  }),
  output: z.object({ jobs: z.array(contractorJobSchema) }).meta({ id: "ContractorJobList" }),
  example: {},
  async handler(ctx, input) {
    const { contractorId, livemode } = contractorOf(ctx);
    const { store } = ctx.services;
    const orders = await store.orders.ordersOfContractor(
      contractorId,
      livemode,
      JOB_STATUSES[input.status],
      200,
    );
    // The jobs it holds: the site's contact is the contractor's to call.
    const sites = await storedOrderSites(
      store,
      orders.map((o) => o.id),
      ctx.services.now(),
      true,
    );
    // The time each job holds of this contractor's (its own ledger rows only).
    const booked = new Map(
      (await store.orders.heldTimes(orders.map((o) => o.id)))
        .filter((held) => held.contractorId === contractorId)
        .map((held) => [held.orderId, { start: held.start, end: held.end }]),
    );
    return {
      jobs: orders.map((o) => ({
        ...jobView(o),
        booked: booked.get(o.id) ?? null,
        site: sites.get(o.id) ?? null,
      })),
    };
  },
});

export const contractorAcceptOperation = defineOperation({
  id: "contractorAcceptOffer",
  name: "contractor.accept_offer",
  summary: "Accept an offer",
  description: "Takes the job offered to you. 409 invalid_transition once the offer expired or was settled.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/offers/accept", input: "body" },
  problems: [404, 409],
  input: z.strictObject({ offer_id: z.string().min(1).max(64).describe("The offer_id from your offers.") }),
  output: contractorJobSchema,
  example: { offer_id: "ofr_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const order = await acceptOffer(
      ctx.services,
      contractor,
      input.offer_id,
      `contractor:${contractor.contractorId}`,
    );
    return jobView(order);
  },
});

export const contractorDeclineOperation = defineOperation({
  id: "contractorDeclineOffer",
  name: "contractor.decline_offer",
  summary: "Decline an offer",
  description: "Turns the job down; it goes to the next contractor in the ranking at once.",
  access: "contractor",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/offers/decline", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    offer_id: z.string().min(1).max(64),
    reason: z.string().max(500).optional().describe("Why, if you wish to say."),
  }),
  output: z.object({ offer_id: z.string(), status: z.literal("declined") }).meta({ id: "DeclinedOffer" }),
  example: { offer_id: "ofr_0VberZOdAb12Cd34Ef56", reason: "fully booked today" },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    await declineOffer(
      ctx.services,
      contractor,
      input.offer_id,
      input.reason ?? null,
      `contractor:${contractor.contractorId}`,
    );
    return { offer_id: input.offer_id, status: "declined" as const };
  },
});

/** The phone's position with "on site" (the check-in) and "completed" (the check-out). */
const checkPosition = reportedPositionSchema
  .optional()
  .describe(
    "Where you are, when your phone gives it: sealed with the step, with its distance to the site. A " +
      "position far from the site is accepted and flagged for the dispatch team, never refused.",
  );

export const contractorReportOperation = defineOperation({
  id: "contractorReportStatus",
  name: "contractor.report_status",
  summary: "Report a job's progress",
  description:
    "Moves your job on: en_route (with eta_minutes), on_site, completed (with final_cost_cents) or " +
    "cannot_complete (with a reason). Only the next steps of the order's status are possible: anything " +
    "else answers 409 invalid_transition naming the current status.",
  access: "contractor",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/jobs/status", input: "body" },
  problems: [404, 409],
  input: z.discriminatedUnion("status", [
    z.strictObject({
      order_id: z.string().min(1).max(64),
      status: z.literal("en_route"),
      eta_minutes: z
        .number()
        .int()
        .min(1)
        .max(24 * 60)
        .describe("Minutes until you arrive."),
    }),
    z.strictObject({
      order_id: z.string().min(1).max(64),
      status: z.literal("on_site"),
      position: checkPosition,
    }),
    z.strictObject({
      order_id: z.string().min(1).max(64),
      status: z.literal("completed"),
      final_cost_cents: z.number().int().min(0).max(100_000_000).describe("What the work cost, in cents."),
      position: checkPosition,
    }),
    z.strictObject({
      order_id: z.string().min(1).max(64),
      status: z.literal("cannot_complete"),
      reason: z.string().min(1).max(1000),
    }),
  ]),
  output: contractorJobSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", status: "en_route", eta_minutes: 25 },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const { order_id, ...report } = input;
    const order = await reportProgress(
      ctx.services,
      contractor,
      order_id,
      report,
      `contractor:${contractor.contractorId}`,
    );
    return jobView(order);
  },
});

export const contractorNteRequestOperation = defineOperation({
  id: "contractorRequestNte",
  name: "contractor.request_nte",
  summary: "Ask for a higher NTE",
  description:
    "On an active job with an NTE, asks the caller to raise it (the caller approves or rejects). One " +
    "request may wait at a time; the amount must exceed the NTE in force.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/jobs/nte-request", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    requested_nte_cents: z.number().int().min(1).max(100_000_000).describe("The NTE you ask for, in cents."),
    reason: z.string().min(1).max(1000).describe("What makes the job cost more."),
  }),
  output: z
    .object({
      request_id: z.string(),
      order_id: z.string(),
      requested_cents: z.number().int(),
      status: z.literal("pending"),
      created_at: z.iso.datetime(),
    })
    .meta({ id: "NteRequest" }),
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    requested_nte_cents: 60_000,
    reason: "corroded supply line",
  },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const row = await requestNte(
      ctx.services,
      contractor,
      input.order_id,
      input.requested_nte_cents,
      input.reason,
      `contractor:${contractor.contractorId}`,
    );
    return {
      request_id: row.id,
      order_id: row.order_id,
      requested_cents: Number(row.requested_cents),
      status: "pending" as const,
      created_at: row.created_at,
    };
  },
});

export const contractorInvoiceOperation = defineOperation({
  id: "contractorInvoice",
  name: "contractor.invoice",
  summary: "Invoice a completed job",
  description:
    "Invoices a completed job: itemised by its `lines` (labour, materials, trip charge, other, tax; the " +
    "service computes each amount and the totals in integer cents), or by `amount_cents` alone (one " +
    "line). With lines, amount_cents is optional and, if sent, must equal the lines' total (422 naming " +
    "both: the service never takes a client's total on trust). The total may not exceed the NTE in force " +
    "(the caller's, or the last increase the caller approved): over it, 409 nte_exceeded; ask for an " +
    "increase first. Revise it with contractor.invoice_revise; read it, with its checks, with order.invoice.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/jobs/invoice", input: "body" },
  problems: [404, 409],
  input: z
    .strictObject({
      order_id: z.string().min(1).max(64),
      amount_cents: z
        .number()
        .int()
        .min(0)
        .max(INVOICE_LIMITS.totalCents)
        .optional()
        .describe("The invoice total, in cents: required without lines; with lines, checked against them."),
      lines: invoiceLinesInput.optional(),
    })
    .refine((v) => v.amount_cents !== undefined || v.lines !== undefined, {
      message: "send the invoice's lines, or its amount_cents",
      path: ["lines"],
    }),
  output: contractorJobSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", amount_cents: 41_250 },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const claimed =
      input.amount_cents === undefined ? null : { field: "amount_cents", cents: input.amount_cents };
    const bill =
      input.lines === undefined
        ? (input.amount_cents as number)
        : itemisedOr422(input.lines as InvoiceLineInput[], claimed);
    const order = await invoice(
      ctx.services,
      contractor,
      input.order_id,
      bill,
      `contractor:${contractor.contractorId}`,
    );
    return jobView(await applyInvoicePolicy(ctx.services, order));
  },
});
