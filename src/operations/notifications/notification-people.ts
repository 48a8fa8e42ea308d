// Who hears of an account's orders besides the site's contact (its opted-in people, each with the kinds
// of notification it wants), and the addresses that opted out (by a message's unsubscribe link or by the
// account): read, set, and an address opted out or back in.

import { createHash } from "node:crypto";
import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { NOTIFICATION_KINDS } from "../../domain/notifications/events.js";
import { normalEmail } from "../../domain/notifications/recipients.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { ownerOf } from "../sites/site-views.js";
import { subscribersOf } from "./compose.js";

const MAX_SUBSCRIBERS = 50;

/** An address: a plain pattern (no JSON Schema format, whose validators disagree on the edges). */
const EMAIL =
  /^[A-Za-z0-9._%+'-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

const email = z
  .string()
  .regex(EMAIL, { error: "must be an email address" })
  .max(254, { error: "must be at most 254 characters" })
  .describe("An email address.");

const subscriberSchema = z.object({
  email,
  events: z
    .array(z.enum(NOTIFICATION_KINDS, { error: `events must be of: ${NOTIFICATION_KINDS.join(", ")}` }))
    .min(1, { error: "events must name at least one kind" })
    .max(NOTIFICATION_KINDS.length)
    .describe("The kinds of notification this person wants."),
});

const subscribersOutput = z
  .object({
    subscribers: z.array(subscriberSchema.extend({ email: z.string() })),
    seal: z
      .string()
      .nullable()
      .describe("Seal of the notification.subscribers_set record that set the list; null: never set."),
  })
  .meta({ id: "NotificationSubscribers" });

/** The account's people as the operations answer them. */
async function peopleView(ctx: OperationContext, accountId: string, livemode: boolean) {
  const rows = await subscribersOf(ctx.services, accountId, livemode);
  return { subscribers: rows.map(({ email, events }) => ({ email, events })), seal: rows[0]?.seal ?? null };
}

export const notificationSubscribersOperation = defineOperation({
  id: "dispatchNotificationSubscribers",
  name: "dispatch.notification_subscribers",
  summary: "Your people who receive notifications",
  description:
    "Your account's people who opted in to your orders' notifications (besides each site's contact), " +
    "each with the kinds it wants (booked, en_route, arrived, completed, rescheduled, cancelled).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/notification-subscribers", input: "query" },
  input: z.strictObject({}),
  output: subscribersOutput,
  example: {},
  async handler(ctx) {
    const owner = ownerOf(ctx);
    return peopleView(ctx, owner.accountId, owner.livemode);
  },
});

export const notificationSubscribersSetOperation = defineOperation({
  id: "dispatchNotificationSubscribersSet",
  name: "dispatch.notification_subscribers_set",
  summary: "Set your people who receive notifications",
  description:
    `Replaces your opted-in people (at most ${MAX_SUBSCRIBERS}): each address receives the kinds it names ` +
    "for every order of yours in this mode, from the next change on. An empty list removes them all. " +
    "Addresses are compared in lower case; one that opted out stays out until it is opted back in.",
  access: "key",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/notification-subscribers", input: "body" },
  input: z.strictObject({ subscribers: z.array(subscriberSchema).max(MAX_SUBSCRIBERS) }),
  output: subscribersOutput,
  example: { subscribers: [{ email: "facilities@example.com", events: ["booked", "completed"] }] },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const at = ctx.services.now().toISOString();
    const byEmail = new Map<string, Set<string>>();
    for (const s of input.subscribers) {
      const key = normalEmail(s.email);
      byEmail.set(key, new Set([...(byEmail.get(key) ?? []), ...s.events]));
    }
    const people = [...byEmail].map(([address, events]) => ({
      email: address,
      // In the kinds' order, whatever the caller's.
      events: JSON.stringify(NOTIFICATION_KINDS.filter((k) => events.has(k))),
    }));
    const record = sealRecord({
      kind: "notification.subscribers_set",
      at,
      accountId: owner.accountId,
      livemode: owner.livemode,
      actor: owner.actor,
      data: {
        subscribers: people.length,
        sha256: createHash("sha256").update(JSON.stringify(people), "utf8").digest("hex"),
      },
    });
    const rows = people.map((p) => ({
      account_id: owner.accountId,
      livemode: owner.livemode ? 1 : 0,
      ...p,
      created_at: at,
      seal: record.seal,
    }));
    const { store } = ctx.services;
    await store.write(async (tx) => {
      await store.notifications.setSubscribers(owner.accountId, owner.livemode, rows, tx);
      tx.appendAudit(record);
    });
    return peopleView(ctx, owner.accountId, owner.livemode);
  },
});

export const notificationOptOutOperation = defineOperation({
  id: "dispatchNotificationOptOut",
  name: "dispatch.notification_opt_out",
  summary: "Opt an address out of your notifications, or back in",
  description:
    "opted_out true: the address receives none of your notifications (in this mode) from now on, as when " +
    "it follows a message's unsubscribe link; messages waiting for it are cancelled when their turn comes. " +
    "opted_out false: it receives them again.",
  access: "key",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/notification-opt-outs", input: "body" },
  input: z.strictObject({ email, opted_out: z.boolean() }),
  output: z
    .object({
      email: z.string(),
      opted_out: z.boolean(),
      changed: z.boolean().describe("false: it was so already."),
    })
    .meta({ id: "NotificationOptOut" }),
  example: { email: "store42@example.com", opted_out: true },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const address = normalEmail(input.email);
    const changed = await ctx.services.store.notifications.setOptOut(
      {
        account_id: owner.accountId,
        livemode: owner.livemode ? 1 : 0,
        email: address,
        created_at: ctx.services.now().toISOString(),
        source: "api",
      },
      input.opted_out,
    );
    return { email: address, opted_out: input.opted_out, changed };
  },
});
