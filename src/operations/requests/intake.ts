// A request's way in and out (issue 35): received (from a site's request form or the account's agent),
// the keyword model's guess, and the account's policy deciding at once; then settled, at intake under the
// "create" policy or later by an approval: linked to an open order at the same site and trade when there is
// one (never doubled), else made into an order by the order operation itself (dispatch.order, with the
// site), the request claimed in the order's own transaction so that one request becomes one order however
// many processes or approvals race. Every step is sealed: request.received, .ordered, .linked, .rejected.
// The received record keeps a digest of the reporter's text, name and contact, not the text itself.

import { createHash } from "node:crypto";
import { sealRecord } from "../../audit/record.js";
import type { Actor } from "../../domain/orders/order.js";
import {
  duplicateOf,
  intakeDecision,
  orderDescription,
  type RequestUrgency,
} from "../../domain/requests/request.js";
import { guessTrade } from "../../domain/requests/trade-model.js";
import type { Site } from "../../domain/sites/site.js";
import type { TradeCode } from "../../domain/trades.js";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { RequestsTable } from "../../storage/schema.js";
import type { WriteTx } from "../../storage/store.js";
import type { OperationContext, Services } from "../kernel/operation.js";
import { accountPrincipal, serviceContext } from "../kernel/service-context.js";
import { orderOperation } from "../orders/create-order.js";
import { attachPhotos } from "./request-photos.js";
import { policyOf } from "./request-views.js";

export interface Report {
  description: string;
  urgency: RequestUrgency;
  name: string;
  contact: string;
}

/** The actor of what the account's policy decides on its own. */
const POLICY_ACTOR = "system:request-policy" as const;

function digestOf(report: Report): string {
  const text = JSON.stringify([report.description, report.name, report.contact]);
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function outcomeRecord(
  r: RequestsTable,
  kind: "request.ordered" | "request.linked" | "request.rejected",
  at: string,
  actor: Actor,
  data: Record<string, unknown>,
) {
  return sealRecord({
    kind,
    at,
    accountId: r.account_id,
    livemode: r.livemode === 1,
    orderId: typeof data.order_id === "string" ? data.order_id : null,
    actor,
    data: { request_id: r.id, site_id: r.site_id, ...data },
  });
}

/**
 * Records a request reported at `site` and applies the account's policy: under "create" with a confident
 * guess it is settled at once (ordered or linked); else it waits, with the reason. An order the policy
 * could not create (refused) leaves the request pending with the refusal as its reason.
 */
export async function receiveRequest(
  services: Services,
  site: Site,
  report: Report,
  from: { source: "form" | "agent"; linkId: string | null; actor: Actor },
): Promise<RequestsTable> {
  const guess = guessTrade(report.description);
  const policy = await policyOf(services, site.accountId, site.livemode);
  const decision = intakeDecision(policy.mode, guess);
  const at = services.now().toISOString();
  const id = newSortableId("wrq");
  const record = sealRecord({
    kind: "request.received",
    at,
    accountId: site.accountId,
    livemode: site.livemode,
    orderId: null,
    actor: from.actor,
    data: {
      request_id: id,
      site_id: site.id,
      source: from.source,
      link_id: from.linkId,
      urgency: report.urgency,
      trade_guess: { trade: guess.trade, best: guess.best, confidence: guess.confidence },
      policy: policy.mode,
      digest: digestOf(report),
    },
  });
  const row: RequestsTable = {
    id,
    account_id: site.accountId,
    livemode: site.livemode ? 1 : 0,
    site_id: site.id,
    link_id: from.linkId,
    source: from.source,
    description: report.description,
    urgency: report.urgency,
    reporter_name: report.name,
    reporter_contact: report.contact,
    guessed_trade: guess.trade,
    guess_confidence_pm: Math.round(guess.confidence * 1000),
    trade: null,
    status: "pending",
    order_id: null,
    reason: decision.kind === "hold" ? decision.reason : null,
    decided_by: null,
    decided_at: null,
    created_by: from.actor,
    created_at: at,
    updated_at: at,
    seal: record.seal,
    decision_seal: null,
  };
  await services.store.write(async (tx) => {
    await services.store.requests.insert(row, tx);
    tx.appendAudit(record);
  });
  if (decision.kind === "hold") return row;
  const ctx = serviceContext(services, accountPrincipal(site.accountId, site.livemode, id), POLICY_ACTOR, {});
  try {
    return await settleRequest(ctx, row, decision.trade);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    const reason = `The order could not be created: ${error.message}`;
    await services.store.write(async (tx) => {
      await services.store.requests.decide(id, { ...undecided(row, at), reason }, tx);
    });
    return { ...row, reason };
  }
}

/** A pending request's columns as they are, for a write that changes only its reason. */
function undecided(r: RequestsTable, at: string) {
  return {
    status: "pending" as const,
    trade: null,
    order_id: null,
    reason: r.reason,
    decided_by: null,
    decided_at: null,
    updated_at: at,
    decision_seal: null,
  };
}

/** 409: the request was decided already (the answer names what it became). */
export const alreadyDecided = (r: RequestsTable) =>
  new ApiError("request_decided", `Request ${r.id} is already ${r.status}.`, {
    extra: { status: r.status, order_id: r.order_id },
  });

/**
 * Settles a pending request with `trade`, as the caller of `ctx` (a key approving, or the policy): linked
 * to the newest open order of that trade at its site, else made into a new order. Answers the request as
 * it is after (409 when it was decided elsewhere first); an order refused is thrown as the refusal.
 */
export function settleRequest(
  ctx: OperationContext,
  r: RequestsTable,
  trade: TradeCode,
): Promise<RequestsTable> {
  // One site's trade is settled one request at a time in a process, so a second report sent with the first
  // sees the first's order (the order's row is written with its whole group commit, after the check inside
  // the transaction below ran); across processes that check does it.
  const key = `${r.site_id} ${trade}`;
  const run = (settling.get(key) ?? Promise.resolve()).then(() => settleNow(ctx, r, trade));
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  settling.set(key, tail);
  void tail.then(() => {
    if (settling.get(key) === tail) settling.delete(key);
  });
  return run;
}

/** The settlements under way in this process, by site and trade (settleRequest). */
const settling = new Map<string, Promise<void>>();

async function settleNow(ctx: OperationContext, r: RequestsTable, trade: TradeCode): Promise<RequestsTable> {
  const { services } = ctx;
  const actor: Actor = ctx.actingAs ?? `key:${ctx.principal?.keyId ?? "unknown"}`;
  const dup = duplicateOf(await services.store.requests.openOrdersAt(r.site_id, trade), trade);
  if (dup !== null) return linkRequest(services, r, trade, dup.id, actor);
  let decided: RequestsTable | null = null;
  // An open order of the trade at the site made meanwhile (two reports at once): linked to it instead.
  let raced: string | null = null;
  const claim = async (tx: WriteTx, _response: unknown, orderId?: string | null) => {
    const meanwhile = duplicateOf(await services.store.requests.openOrdersAt(r.site_id, trade, tx), trade);
    if (meanwhile !== null) {
      raced = meanwhile.id;
      return false;
    }
    const at = services.now().toISOString();
    const record = outcomeRecord(r, "request.ordered", at, actor, { order_id: orderId, trade });
    const change = {
      status: "ordered" as const,
      trade,
      order_id: orderId ?? null,
      reason: null,
      decided_by: actor,
      decided_at: at,
      updated_at: at,
      decision_seal: record.seal,
    };
    if (!(await services.store.requests.decide(r.id, change, tx))) return false;
    tx.appendAudit(record);
    if (orderId)
      await attachPhotos(services, r, orderId, await services.store.requests.photosOf(r.id, tx), at, tx);
    decided = { ...r, ...change };
    return true;
  };
  const input = orderOperation.input.parse({
    trade,
    site_id: r.site_id,
    description: orderDescription(r.id, {
      description: r.description,
      reporterName: r.reporter_name,
      reporterContact: r.reporter_contact,
      source: r.source,
    }),
    urgency: r.urgency,
    reference_id: r.id,
  });
  const orderCtx: OperationContext = {
    ...ctx,
    rawInput: input,
    idempotency: { key: `request:${r.id}`, claim },
  };
  await orderOperation.handler(orderCtx, input);
  if (decided !== null) return decided;
  if (raced !== null) return linkRequest(services, r, trade, raced, actor);
  const now = await services.store.requests.byId(r.id);
  throw alreadyDecided(now ?? r);
}

async function linkRequest(
  services: Services,
  r: RequestsTable,
  trade: TradeCode,
  orderId: string,
  actor: Actor,
): Promise<RequestsTable> {
  const at = services.now().toISOString();
  const record = outcomeRecord(r, "request.linked", at, actor, { order_id: orderId, trade });
  const change = {
    status: "linked" as const,
    trade,
    order_id: orderId,
    reason: null,
    decided_by: actor,
    decided_at: at,
    updated_at: at,
    decision_seal: record.seal,
  };
  const ok = await services.store.write(async (tx) => {
    if (!(await services.store.requests.decide(r.id, change, tx))) return false;
    tx.appendAudit(record);
    await attachPhotos(services, r, orderId, await services.store.requests.photosOf(r.id, tx), at, tx);
    return true;
  });
  if (!ok) throw alreadyDecided((await services.store.requests.byId(r.id)) ?? r);
  return { ...r, ...change };
}

/** Rejects a pending request, with the reason, as the caller of `ctx`. */
export async function rejectRequest(
  services: Services,
  r: RequestsTable,
  reason: string,
  actor: Actor,
): Promise<RequestsTable> {
  const at = services.now().toISOString();
  const record = outcomeRecord(r, "request.rejected", at, actor, { reason });
  const change = {
    status: "rejected" as const,
    trade: null,
    order_id: null,
    reason,
    decided_by: actor,
    decided_at: at,
    updated_at: at,
    decision_seal: record.seal,
  };
  const ok = await services.store.write(async (tx) => {
    if (!(await services.store.requests.decide(r.id, change, tx))) return false;
    tx.appendAudit(record);
    return true;
  });
  if (!ok) throw alreadyDecided((await services.store.requests.byId(r.id)) ?? r);
  return { ...r, ...change };
}
