// Do-not-dispatch (issue 33): an account excludes a contractor from its own work, for every trade or for
// some, with a reason. The account names the contractor by its handle (contractor_ref, the masked
// reference its orders show), which is resolved among the pool of the key's mode. Each change is sealed in
// the audit log (account.do_not_dispatch_added / _removed), where the contractor's id is a disclosure for
// the dispatch team and the account reads its handle; a contractor reads no account-level record, so it
// never learns who excluded it or why. Matching (quotes, orders, availability), the cascade's next offer,
// a dispatcher's assignment and the optimised day honour the list (domain/do-not-dispatch.ts). The
// dispatch team lists every account's entries.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import {
  barringEntry,
  DO_NOT_DISPATCH_MAX_ENTRIES,
  DO_NOT_DISPATCH_REASON_MAX,
  type DoNotDispatchEntry,
} from "../../domain/do-not-dispatch.js";
import { ApiError, validationError } from "../../errors.js";
import { newId } from "../../ids.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { contractorIdSchema, tradeSchema } from "../kernel/schemas.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";

const ADDED = "account.do_not_dispatch_added";
const REMOVED = "account.do_not_dispatch_removed";

const entryIdSchema = z
  .string()
  .max(44, { error: "entry_id must be dnd_ followed by letters or digits" })
  .regex(/^dnd_[0-9A-Za-z]{1,40}$/, { error: "entry_id must be dnd_ followed by letters or digits" });

const reasonSchema = z
  .string()
  .trim()
  .min(1, { error: "reason is required" })
  .max(DO_NOT_DISPATCH_REASON_MAX, { error: `reason is at most ${DO_NOT_DISPATCH_REASON_MAX} characters` });

const entryShape = {
  entry_id: z.string(),
  contractor_ref: z.string().describe("The account's handle of the contractor (as its orders show it)."),
  trades: z
    .array(z.string())
    .nullable()
    .describe("The trades the contractor is excluded from; null: every trade."),
  reason: z.string().describe("Why, as the account gave it."),
  created_at: z.iso.datetime(),
  created_by: z.enum(["account", "dispatcher"]).describe("Who added it."),
  record: sealRefSchema.describe(`The audit record that added it (${ADDED}).`),
};

const entrySchema = z.object(entryShape).meta({ id: "DoNotDispatchEntry" });

const dispatcherEntrySchema = z
  .object({
    ...entryShape,
    account_id: z.string().describe("The account whose work the contractor is excluded from."),
    contractor_id: z.string(),
  })
  .meta({ id: "DispatcherDoNotDispatchEntry" });

function view(e: DoNotDispatchEntry, ctx: OperationContext) {
  return {
    entry_id: e.id,
    contractor_ref: ctx.services.refs.of(e.accountId, e.contractorId),
    trades: e.trades === null ? null : [...e.trades],
    reason: e.reason,
    created_at: e.createdAt,
    created_by: e.createdBy.startsWith("operator:") ? ("dispatcher" as const) : ("account" as const),
    record: sealRef(ctx.baseUrl, e.seal, ADDED, e.createdAt),
  };
}

/** The contractor of the key's pool an account's handle names (404 when it names none). */
function resolveRef(ctx: OperationContext, accountId: string, livemode: boolean, ref: string): string {
  const pool = livemode ? "live" : "sandbox";
  const ids = (function* () {
    for (const c of ctx.services.pool.index.all()) if (c.pool === pool) yield c.id;
  })();
  const id = ctx.services.refs.find(accountId, ref, ids);
  if (id === undefined) {
    throw new ApiError("not_found", `contractor_ref ${ref} names no contractor of this pool.`, {
      errors: [{ field: "contractor_ref", message: "names no contractor of this pool", code: "unknown_ref" }],
    });
  }
  return id;
}

export const doNotDispatchOperation = defineOperation({
  id: "doNotDispatch",
  name: "dispatch.do_not_dispatch",
  summary: "Your do-not-dispatch list",
  description:
    "The contractors your work of this key's mode is never offered to, each with its trades (null: every " +
    "trade) and your reason, oldest first.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/do-not-dispatch", input: "query" },
  input: z.strictObject({}),
  output: z.object({ entries: z.array(entrySchema) }).meta({ id: "DoNotDispatchList" }),
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    const entries = await ctx.services.store.doNotDispatch.ofAccount(principal.accountId, principal.livemode);
    return { entries: entries.map((e) => view(e, ctx)) };
  },
});

export const doNotDispatchAddOperation = defineOperation({
  id: "doNotDispatchAdd",
  name: "dispatch.do_not_dispatch_add",
  summary: "Exclude a contractor from your work",
  description:
    "Adds a contractor, named by your handle of it (contractor_ref, as your orders show it), to your " +
    "do-not-dispatch list for this key's mode: for every trade, or for the trades listed, with your reason " +
    "(sealed in the audit log, account.do_not_dispatch_added; the contractor is never shown it). From then " +
    "on no quote or order of yours is matched to it, the cascade passes it by and the dispatch team cannot " +
    "assign it your jobs (409 contractor_excluded). Jobs it already holds or was offered stay. 404 when " +
    "the handle names no contractor of this pool; 422 on contractor_ref (already_excluded) when an entry " +
    `already covers those trades; at most ${DO_NOT_DISPATCH_MAX_ENTRIES} entries.`,
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/do-not-dispatch", input: "body" },
  problems: [404],
  input: z.strictObject({
    contractor_ref: z
      .string()
      .max(40)
      .describe("Your handle of the contractor: cref- and 22 letters or digits, as your orders show it."),
    trades: z
      .array(tradeSchema)
      .min(1)
      .max(8)
      .optional()
      .describe("The trades it is excluded from; left out: every trade."),
    reason: reasonSchema.describe(`Why (at most ${DO_NOT_DISPATCH_REASON_MAX} characters; sealed).`),
  }),
  output: entrySchema,
  example: {
    contractor_ref: "cref-4bX9Qm2LpT7vR1sZ8kN3wY",
    trades: ["plumbing"],
    reason: "left the site unsafe twice",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { accountId, livemode } = principal;
    const contractorId = resolveRef(ctx, accountId, livemode, input.contractor_ref);
    const trades = input.trades ? [...new Set(input.trades)].sort() : null;
    const at = ctx.services.now().toISOString();
    const actor = `key:${principal.keyId}` as const;
    const { store } = ctx.services;
    const entry = await store.write(async (tx) => {
      const entries = await store.doNotDispatch.ofAccount(accountId, livemode, tx);
      const covering = entries.find(
        (e) =>
          e.contractorId === contractorId &&
          (trades ?? ["*"]).every((t) => barringEntry([e], contractorId, t)),
      );
      if (covering) {
        throw validationError([
          {
            field: "contractor_ref",
            code: "already_excluded",
            message: `entry ${covering.id} already excludes this contractor from these trades`,
          },
        ]);
      }
      if (entries.length >= DO_NOT_DISPATCH_MAX_ENTRIES) {
        throw validationError([
          {
            field: "contractor_ref",
            code: "too_many_entries",
            message: `the list holds ${DO_NOT_DISPATCH_MAX_ENTRIES} entries at most: remove one first`,
          },
        ]);
      }
      const id = newId("dnd", 16);
      const record = sealRecord({
        kind: ADDED,
        at,
        accountId,
        livemode,
        orderId: null,
        actor,
        data: { entry_id: id, contractor_id: contractorId, trades, reason: input.reason },
        refOf: ctx.services.refs.forAccount(accountId),
      });
      const added: DoNotDispatchEntry = {
        id,
        accountId,
        livemode,
        contractorId,
        trades,
        reason: input.reason,
        createdAt: at,
        createdBy: actor,
        seal: record.seal,
      };
      await store.doNotDispatch.insert(added, tx);
      tx.appendAudit(record);
      return added;
    });
    ctx.services.doNotDispatch.changed(accountId, livemode);
    return view(entry, ctx);
  },
});

export const doNotDispatchRemoveOperation = defineOperation({
  id: "doNotDispatchRemove",
  name: "dispatch.do_not_dispatch_remove",
  summary: "Take a contractor off your do-not-dispatch list",
  description:
    "Removes one entry of your list, with a reason (sealed, account.do_not_dispatch_removed): the " +
    "contractor may be matched to your work again. 404 when you have no entry by that id in force.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/do-not-dispatch/remove", input: "body" },
  problems: [404],
  input: z.strictObject({
    entry_id: entryIdSchema,
    reason: reasonSchema.describe("Why (sealed)."),
  }),
  output: z
    .object({ entry_id: z.string(), removed: z.literal(true), record: sealRefSchema })
    .meta({ id: "DoNotDispatchRemoved" }),
  example: { entry_id: "dnd_8Hq2LmX4pR7tVw1Z", reason: "new crew lead, trying them again" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { accountId, livemode } = principal;
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const actor = `key:${principal.keyId}` as const;
    const seal = await store.write(async (tx) => {
      const entry = await store.doNotDispatch.byId(input.entry_id, tx);
      if (!entry || entry.accountId !== accountId || entry.livemode !== livemode) {
        throw new ApiError("not_found", `You have no do-not-dispatch entry ${input.entry_id}.`);
      }
      const record = sealRecord({
        kind: REMOVED,
        at,
        accountId,
        livemode,
        orderId: null,
        actor,
        data: { entry_id: entry.id, contractor_id: entry.contractorId, reason: input.reason },
        refOf: ctx.services.refs.forAccount(accountId),
      });
      if (!(await store.doNotDispatch.remove(entry.id, at, actor, input.reason, tx))) {
        throw new ApiError("not_found", `You have no do-not-dispatch entry ${input.entry_id}.`);
      }
      tx.appendAudit(record);
      return record.seal;
    });
    ctx.services.doNotDispatch.changed(accountId, livemode);
    return {
      entry_id: input.entry_id,
      removed: true as const,
      record: sealRef(ctx.baseUrl, seal, REMOVED, at),
    };
  },
});

export const dispatcherDoNotDispatchOperation = defineOperation({
  id: "dispatcherDoNotDispatch",
  name: "dispatcher.do_not_dispatch",
  summary: "Every account's do-not-dispatch entries",
  description:
    "The do-not-dispatch entries in force of every account in the key's mode, oldest first, with the " +
    "account, the contractor (id and the account's handle), the trades and the account's reason; " +
    "filtered by account_id and contractor_id when given. An excluded contractor is never offered that " +
    "account's work and cannot be assigned it (409 contractor_excluded): the entry is the account's to " +
    "remove.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/do-not-dispatch", input: "query" },
  input: z.strictObject({
    account_id: z.string().min(1).max(64).optional().describe("Only this account's entries."),
    contractor_id: contractorIdSchema.optional().describe("Only the entries naming this contractor."),
  }),
  output: z.object({ entries: z.array(dispatcherEntrySchema) }).meta({ id: "DispatcherDoNotDispatchList" }),
  example: {},
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const entries = await ctx.services.store.doNotDispatch.list({
      livemode: principal.livemode,
      accountId: input.account_id,
      contractorId: input.contractor_id,
    });
    return {
      entries: entries.map((e) => ({
        ...view(e, ctx),
        account_id: e.accountId,
        contractor_id: e.contractorId,
      })),
    };
  },
});
