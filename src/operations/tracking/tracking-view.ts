// What a tracking link opens (/t/<token>, transports/http/tracking-page.ts): the link checked (signed,
// not revoked, not expired) and the public view of its order. The view is all the page, its JSON and its
// stream ever show: the job's status in words, the arrival window or the live ETA, the technician's first
// name and trade, and the steps done with their times; never the contractor's contact or full name, the
// account, the address, prices or any other order.

import { z } from "zod";
import type { Order } from "../../domain/orders/order.js";
import type { OrderStatus } from "../../domain/orders/transitions.js";
import { TRADES } from "../../domain/trades.js";
import type { TrackingLinksTable } from "../../storage/schema.js";
import type { Services } from "../kernel/operation.js";

const DAY_MS = 86_400_000;

/** The public stages of a job, in the words a site's people use. */
const STAGES = ["scheduling", "booked", "en_route", "on_site", "completed", "delayed", "cancelled"] as const;
type Stage = (typeof STAGES)[number];

const STAGE_OF: Record<OrderStatus, Stage> = {
  received: "scheduling",
  offered: "scheduling",
  needs_dispatcher: "scheduling",
  accepted: "booked",
  en_route: "en_route",
  on_site: "on_site",
  completed: "completed",
  invoiced: "completed",
  revision_requested: "completed",
  invoice_rejected: "completed",
  approved: "completed",
  paid: "completed",
  cannot_complete: "delayed",
  cancelled: "cancelled",
};

const STAGE_TEXT: Record<Stage, string> = {
  scheduling: "We are finding a technician for this job.",
  booked: "A technician is booked for this job.",
  en_route: "The technician is on the way.",
  on_site: "The technician is on site.",
  completed: "The work is done.",
  delayed: "The technician could not finish the job; the team is arranging the next visit.",
  cancelled: "This job was cancelled.",
};

const STEPS = ["accepted", "en_route", "on_site", "completed"] as const;

export const trackingViewSchema = z
  .object({
    stage: z
      .enum(STAGES)
      .describe(
        "Where the job is: scheduling (a technician is being found), booked, en_route, on_site, completed, " +
          "delayed (the technician could not finish; the team arranges the next visit) or cancelled.",
      ),
    status_text: z.string().describe("The stage in a sentence."),
    trade: z.string().describe("The job's trade, in words (e.g. Plumbing)."),
    technician: z
      .object({
        first_name: z.string().describe("The technician's first name only."),
        trade: z.string().describe("The technician's trade for this job, in words."),
      })
      .nullable()
      .describe("Who comes, once a technician holds the job (booked to completed); null before."),
    arrival_window: z
      .object({ start: z.iso.datetime(), end: z.iso.datetime() })
      .nullable()
      .describe("The window the technician is due in, for booked work; null for as-soon-as-possible work."),
    eta_at: z.iso
      .datetime()
      .nullable()
      .describe("While the technician is on the way: when it expects to arrive."),
    time_zone: z.string().nullable().describe("The job's time zone (IANA): the page shows times in it."),
    steps: z
      .array(
        z.object({
          step: z.enum(STEPS),
          done: z.boolean(),
          at: z.iso.datetime().nullable().describe("When the step was done; null: not yet (or not known)."),
        }),
      )
      .describe("accepted, en_route, on_site and completed, in that order: whether each is done, and when."),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "TrackingView" });

export type TrackingView = z.infer<typeof trackingViewSchema>;

/** When the order closed (its work done, or cancelled); null while it is open. */
function closedAt(order: Order): string | null {
  const stage = STAGE_OF[order.status];
  if (stage === "completed") return order.completed_at ?? order.updated_at;
  if (stage === "cancelled") return order.updated_at;
  return null;
}

/** When a link of `order` stops opening its page; null while the order is open. */
export function linkExpiry(
  link: Pick<TrackingLinksTable, "expires_at">,
  order: Order,
  daysAfterClose: number,
): string | null {
  if (link.expires_at !== null) return link.expires_at;
  const closed = closedAt(order);
  return closed === null ? null : new Date(Date.parse(closed) + daysAfterClose * DAY_MS).toISOString();
}

/** The first word of a name, at most 40 characters ("" when it has none). */
export function firstNameOf(name: string): string {
  return (name.trim().split(/\s+/u)[0] ?? "").slice(0, 40);
}

/** When the order's contractor last set off: the newest progress report to en_route. */
async function enRouteAt(services: Services, order: Order): Promise<string | null> {
  if (order.accepted_at === null) return null;
  const reports = await services.store.trackingLinks.progressTimes(order.id);
  let at: string | null = null;
  for (const r of reports) {
    if (r.at < order.accepted_at) continue;
    const data = (JSON.parse(r.record) as { data?: { to?: unknown } }).data;
    if (data?.to === "en_route") at = r.at;
  }
  return at;
}

/** The public view of `order`. */
export async function trackingView(services: Services, order: Order): Promise<TrackingView> {
  const stage = STAGE_OF[order.status];
  const trade = TRADES[order.trade]?.name ?? order.trade;
  const held = ["booked", "en_route", "on_site", "completed"].includes(stage) && order.contractor_id;
  const [listing] = held ? await services.store.contractors.listings([order.contractor_id as string]) : [];
  const enRoute = await enRouteAt(services, order);
  const step = (name: (typeof STEPS)[number], done: boolean, at: string | null) => ({
    step: name,
    done,
    at: done ? at : null,
  });
  const onSite = stage === "on_site" || stage === "completed";
  return {
    stage,
    status_text: STAGE_TEXT[stage],
    trade,
    technician: listing ? { first_name: firstNameOf(listing.name), trade } : null,
    arrival_window:
      order.window_start && order.window_end ? { start: order.window_start, end: order.window_end } : null,
    eta_at: stage === "en_route" ? order.eta_at : null,
    time_zone: order.time_zone,
    steps: [
      step("accepted", Boolean(held), order.accepted_at),
      step("en_route", stage === "en_route" || onSite, enRoute),
      step("on_site", onSite, order.on_site_at),
      step("completed", stage === "completed", order.completed_at),
    ],
    updated_at: order.updated_at,
  };
}

/**
 * The link a token opens and its order, or null: a token of another shape or a wrong mac, no such link,
 * a revoked link, or one expired. Every null is answered alike; the row is read whether the mac matched
 * or not, so a forged token costs what a real one does.
 */
export async function openLink(
  services: Services,
  token: string,
): Promise<{ link: TrackingLinksTable; order: Order } | null> {
  const checked = services.tracking.check(token);
  if (checked === null) return null;
  const link = await services.store.trackingLinks.byId(checked.id);
  if (!checked.valid || link === undefined || link.revoked_at !== null) return null;
  const order = await services.store.orders.find(link.order_id, link.account_id, link.livemode === 1);
  if (order === undefined) return null;
  const expiry = linkExpiry(link, order, services.config.TRACKING_LINK_DAYS_AFTER_CLOSE);
  if (expiry !== null && services.now().toISOString() >= expiry) return null;
  return { link, order };
}
