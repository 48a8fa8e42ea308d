// Runs the work order's commands: reads the state a command needs inside a group-committed transaction,
// asks the domain (domain/orders/commands.ts) what to do, and hands the change to the one writer
// (storage/order-writer.ts). Used by the operations, the offer sweeper and the sandbox's simulated
// contractors alike, so every change of an order takes this one path.
//
// After a commit, the contractors' capacity the change took and gave back (its count and its time) is
// mirrored into this process's contractor index (matching reads it); the store's ledger stays the
// authority.
//
// The time a job takes of its contractor (domain/commitments.ts) is placed by the writer inside the
// transaction, against the blocks the contractor holds then: where the contractor's calendar and those
// blocks let it start (inside the window, or from its readiness for as-soon-as-possible work). Strictly
// for the automatic steps (creation, the cascade's next offer): a contractor without room has no
// capacity for the job, and the command is decided again without it. A dispatcher's assignment is a
// person's decision: the job is placed where it fits, else at its window's start (or as soon as the
// contractor can be there), and the assignment stands. A dispatcher's exact start (the schedule board's
// drop: assign or reschedule with `start`) is placed there or nowhere, and the placement records why not
// (ctx.unavailableWhy) for the refusal to name.

import { type AuditEntry, sealRecord } from "../../audit/record.js";
import type { ContractorRefs } from "../../auth/contractor-refs.js";
import type { Commitment } from "../../domain/commitments.js";
import { barredFor, exclusionRefusal } from "../../domain/do-not-dispatch.js";
import { lookupCity, lookupZip, type Point, sitePointOf } from "../../domain/geo.js";
import {
  arrivalOf,
  baseTravelMinutes,
  type MatchRequest,
  type MatchTime,
  UNKNOWN_TRAVEL_MINUTES,
  zoneOffsetsFor,
} from "../../domain/matching.js";
import type { CommandContext, ContractorKey, ProgressReport } from "../../domain/orders/commands.js";
import * as orders from "../../domain/orders/commands.js";
import type { CompletionEvidence } from "../../domain/orders/completion-gate.js";
import * as counters from "../../domain/orders/counter-commands.js";
import { placementConflict, type StartConflict } from "../../domain/orders/exact-start.js";
import type { Itemised } from "../../domain/orders/invoice.js";
import * as invoiceDecisions from "../../domain/orders/invoice-decisions.js";
import {
  flagMaintenanceOverdue as flagOverdue,
  type OverdueOccurrence,
} from "../../domain/orders/maintenance-overdue.js";
import type {
  Actor,
  Decision,
  NteRequest,
  Order,
  OrderChange,
  OrderState,
  Refusal,
} from "../../domain/orders/order.js";
import { dueFirings, fireSlaClock } from "../../domain/orders/sla-clocks.js";
import type { Role } from "../../domain/orders/transitions.js";
import { ALWAYS, type ZoneOffsets } from "../../domain/time/calendar.js";
import { TRADES } from "../../domain/trades.js";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { Placement } from "../../storage/order-writer.js";
import type { WriteLocks, WriteTx } from "../../storage/store.js";
import { outboxEvent, webhookBaseUrl } from "../../webhooks/outbox.js";
import type { Services } from "../kernel/operation.js";
import { completionRequirements } from "./checklist-state.js";
import { loggedEvent } from "./event-log.js";
import { orderSummaryView } from "./order-view.js";

export type OrderServices = Pick<Services, "store" | "pool" | "config" | "refs" | "now">;

/** A committed change, with its sealed audit records (in the change's order). */
export interface Committed {
  kind: "committed";
  change: OrderChange;
  audit: AuditEntry[];
  /** The blocks of time the change took, by contractor. */
  blocks?: Array<[string, Commitment]>;
}

/** How a command's job is placed in a contractor's time (see the module's comment). */
interface Timing {
  /** No room: no capacity (the automatic steps); false: placed anyway (a dispatcher's assignment). */
  strict: boolean;
  /** The job's start (ms), exactly: placed there or nowhere, whatever `strict` says (the schedule board). */
  exact?: number;
  /** The job's place, when the caller resolved it already. */
  point?: Point | null;
  /** Starts the matcher found for contractors, used when the contractor holds no time in the
   * transaction (the same answer, not worked out twice). */
  starts?: ReadonlyMap<string, number>;
}

export interface RunOptions {
  /** Checked once the capacity is secured, before anything is written (creation's idempotency claim). */
  guard?: (tx: WriteTx, committed: Committed) => Promise<boolean>;
  /** A contractor this process counted as busy before the command (creation's pick): given back after. */
  tentative?: string | null;
  /** The block counted with it as held. */
  tentativeBlock?: Commitment | null;
  /** How the job is placed in its contractor's time (default: strictly). */
  timing?: Timing;
}

/** The problem a refusal answers with. */
function refusalError(refusal: Refusal): ApiError {
  const extra =
    refusal.currentStatus === undefined
      ? refusal.extra
      : { current_status: refusal.currentStatus, ...refusal.extra };
  return new ApiError(refusal.code, refusal.message, {
    ...(refusal.errors ? { errors: refusal.errors } : {}),
    ...(extra ? { extra } : {}),
  });
}

function seal(change: OrderChange, refs: ContractorRefs): AuditEntry[] {
  const order = change.after;
  const refOf = refs.forAccount(order.account_id);
  return change.audit.map((fact) =>
    sealRecord({
      kind: fact.kind,
      at: fact.at,
      accountId: order.account_id,
      livemode: order.livemode,
      orderId: order.id,
      actor: fact.actor,
      data: fact.data,
      refOf,
    }),
  );
}

/**
 * Reads, decides and commits one command in one transaction. Returns the committed change, the refusal,
 * or "lost" when the guard refused. A contractor found without capacity at commit is taken out and the
 * command decided again (the cascade moves on as if it had never been free).
 */
export async function tryOrderCommand<S>(
  services: OrderServices,
  /** What the command will lock (its order, or its offer's; a contractor it will take): Store.write. */
  locks: WriteLocks,
  load: (tx: WriteTx) => Promise<S>,
  decide: (state: S, ctx: CommandContext) => Decision,
  options: RunOptions = {},
): Promise<Committed | Refusal | { kind: "lost" }> {
  const now = services.now();
  const baseUrl = webhookBaseUrl(services.config);
  const view = (order: Order) => orderSummaryView(order, { baseUrl, services });
  let outcome: Committed | Refusal | { kind: "lost" } | undefined;
  try {
    outcome = await services.store.write(async (tx) => {
      const state = await load(tx);
      const unavailable = new Set<string>();
      const unavailableWhy = new Map<string, StartConflict>();
      const ctx: CommandContext = {
        now,
        unavailable,
        unavailableWhy,
        sandboxPlayed: services.config.SANDBOX_SIMULATION,
        newId: newSortableId,
      };
      for (;;) {
        const decision = decide(state, ctx);
        if (decision.kind === "refused") return decision;
        const committed: Committed = {
          kind: "committed",
          change: decision,
          audit: seal(decision, services.refs),
        };
        const order = decision.after;
        const outbox = decision.event
          ? await outboxEvent(
              order,
              decision.event,
              () => tx.hasDefaultEndpoint(order.account_id, order.livemode),
              view,
            )
          : null;
        const guard = options.guard;
        const place =
          decision.capacity.take.length > 0 || (decision.capacity.retime?.length ?? 0) > 0
            ? placementFor(services, order, now, options.timing ?? STRICT, unavailableWhy)
            : undefined;
        const result = await tx.commitOrderChange({
          change: decision,
          audit: committed.audit,
          outbox,
          logged: loggedEvent(decision),
          ...(guard ? { guard: () => guard(tx, committed) } : {}),
          ...(place ? { place } : {}),
        });
        if (result.ok) {
          committed.blocks = result.blocks;
          return committed;
        }
        if (result.reason === "capacity") {
          unavailable.add(result.contractorId);
          continue;
        }
        if (result.reason === "guard") return { kind: "lost" as const };
        return {
          kind: "refused" as const,
          code: "invalid_transition" as const,
          message: "The order changed meanwhile; read it again.",
          currentStatus: decision.before?.status ?? "received",
        };
      }
    }, locks);
  } finally {
    mirrorCapacity(services, outcome, options.tentative ?? null, options.tentativeBlock ?? null);
  }
  return outcome;
}

const STRICT: Timing = { strict: true };
const MINUTE_MS = 60_000;

/** The job's time as the order states it (its window, or arrive_by); null for an order made before
 * orders stated one (migration 0017): it holds no time. */
export function orderTime(order: Order, now: Date): MatchTime | null {
  const window =
    order.window_start !== null && order.window_end !== null
      ? { start: Date.parse(order.window_start), end: Date.parse(order.window_end) }
      : null;
  const arriveBy = order.arrive_by === null ? null : Date.parse(order.arrive_by);
  if (window === null && arriveBy === null) return null;
  const hours = TRADES[order.trade]?.typicalJobHours ?? 2;
  return { now: now.getTime(), window, arriveBy, durationMinutes: Math.round(hours * 60) };
}

/** Where the order's job is: its ZIP's centroid, else its city's; null when neither is known. */
export function orderPoint(order: Order): Point | null {
  const zip = order.zip ? lookupZip(order.zip) : undefined;
  if (zip) return { lat: zip.lat, lon: zip.lon };
  return order.city ? (lookupCity(order.city, order.state) ?? null) : null;
}

/** Where the order's job goes in a contractor's time, given the blocks it holds (see the module's
 * comment); undefined when the order states no time. An exact start that finds no room records why in
 * `why`. */
function placementFor(
  services: OrderServices,
  order: Order,
  now: Date,
  timing: Timing,
  why: Map<string, StartConflict>,
): Placement | undefined {
  const time = orderTime(order, now);
  if (time === null) return undefined;
  const point = timing.point !== undefined ? timing.point : orderPoint(order);
  const req: Pick<MatchRequest, "urgency" | "point" | "time"> = {
    urgency: order.urgency,
    point,
    time,
  };
  const { index, travel } = services.pool;
  const duration = time.durationMinutes * MINUTE_MS;
  const block = (start: number): Commitment => ({ orderId: order.id, start, end: start + duration, point });
  let zones: ZoneOffsets | undefined;
  return (contractorId, held) => {
    if (timing.exact !== undefined) {
      zones ??= zoneOffsetsFor(req);
      const conflict = placementConflict({
        contractorId,
        calendar: index.contractorOf(contractorId)?.calendar ?? ALWAYS,
        block: block(timing.exact),
        held,
        travel,
        zones,
        anyHours: order.urgency === "emergency",
        now: time.now,
      });
      if (conflict === null) return block(timing.exact);
      why.set(contractorId, conflict);
      return null;
    }
    const known = timing.starts?.get(contractorId);
    if (known !== undefined && held.length === 0) return block(known);
    const c = index.contractorOf(contractorId);
    const fromBase = c ? baseTravelMinutes(c, point, travel) : UNKNOWN_TRAVEL_MINUTES;
    zones ??= zoneOffsetsFor(req);
    const arrival = arrivalOf(c?.calendar, req, c?.responseMinutes ?? 0, fromBase, zones, {
      held,
      travel,
      judgeDeadline: false,
    });
    if (arrival?.at != null) return block(arrival.at);
    if (timing.strict) return null;
    const ready = time.now + Math.round((c?.responseMinutes ?? 0) + fromBase) * MINUTE_MS;
    return block(time.window ? Math.max(time.window.start, time.now) : ready);
  };
}

/** This process's index follows what the store committed (and forgets a tentative hold). */
function mirrorCapacity(
  services: OrderServices,
  outcome: Committed | Refusal | { kind: "lost" } | undefined,
  tentative: string | null,
  tentativeBlock: Commitment | null,
): void {
  const index = services.pool.index;
  if (tentative !== null) {
    index.releaseJob(tentative);
    if (tentativeBlock !== null) index.unhold(tentative, tentativeBlock.orderId);
  }
  if (outcome?.kind !== "committed") return;
  const orderId = outcome.change.after.id;
  const { take, release } = outcome.change.capacity;
  for (const id of take) index.addJob(id);
  for (const id of release) {
    index.releaseJob(id);
    // Taken and given back at once (assigned to the contractor offered the job): its block stays.
    if (!take.includes(id)) index.unhold(id, orderId);
  }
  // A moved window: the old block gives way to the new one (the unit stays counted).
  for (const id of outcome.change.capacity.retime ?? []) index.unhold(id, orderId);
  for (const [id, block] of outcome.blocks ?? []) index.hold(id, block);
}

/** As tryOrderCommand, answering a refusal with its problem (the operations' form). */
async function runOrderCommand<S>(
  services: OrderServices,
  locks: WriteLocks,
  load: (tx: WriteTx) => Promise<S>,
  decide: (state: S, ctx: CommandContext) => Decision,
  timing?: Timing,
): Promise<Committed> {
  const outcome = await tryOrderCommand(services, locks, load, decide, timing ? { timing } : {});
  if (outcome.kind === "refused") throw refusalError(outcome);
  if (outcome.kind === "lost") throw new Error("a command without a guard lost its guard");
  return outcome;
}

// --- What the commands read ---------------------------------------------------------------------------

/** An order and its offers, the order locked until COMMIT (where the store locks rows). */
async function loadOrder(services: OrderServices, tx: WriteTx, orderId: string): Promise<OrderState | null> {
  const order = await services.store.orders.byId(orderId, tx, true);
  return order ? { order, offers: await services.store.orders.offersOf(order.id, tx) } : null;
}

/** What the account requires of the job's proof, and what the order holds (only when it requires any);
 * inside `tx` as that transaction sees it, or outside one for a read. */
export async function completionEvidence(
  services: OrderServices,
  tx: WriteTx | undefined,
  order: Order,
): Promise<CompletionEvidence | undefined> {
  const requirements = await services.store.proofRequirements.get(order.account_id, order.livemode, tx);
  if (!requirements || (!requirements.signature_required && !requirements.photo_required)) return undefined;
  const counts = await services.store.attachments.proofCounts(
    order.id,
    `contractor:${order.contractor_id}`,
    tx,
  );
  return { requirements, ...counts };
}

/** The order an offer belongs to, with its offers. */
async function loadByOffer(
  services: OrderServices,
  tx: WriteTx,
  offerId: string,
): Promise<OrderState | null> {
  const offer = await services.store.orders.offerById(offerId, tx);
  return offer ? loadOrder(services, tx, offer.order_id) : null;
}

/** An order's state with the contractors its account's do-not-dispatch list bars from its trade, read in
 * the command's transaction (exact in every deployment: the cascade passes them by). */
async function withBarred(
  services: OrderServices,
  tx: WriteTx,
  state: OrderState | null,
): Promise<{ state: OrderState | null; barred: ReadonlySet<string> }> {
  if (!state) return { state, barred: new Set() };
  const { order } = state;
  const entries = await services.store.doNotDispatch.ofAccount(order.account_id, order.livemode, tx);
  return { state, barred: barredFor(entries, order.trade) };
}

/** The command's context with the barred contractors counted unavailable (nobody offers them the job). */
function barring(ctx: CommandContext, barred: ReadonlySet<string>): CommandContext {
  return barred.size === 0 ? ctx : { ...ctx, unavailable: new Set([...ctx.unavailable, ...barred]) };
}

function present(state: OrderState | null, orderId: string): OrderState {
  if (!state) throw new Error(`order ${orderId} vanished`);
  return state;
}

// --- The commands -------------------------------------------------------------------------------------

/** A contractor accepts its pending offer. */
export async function acceptOffer(
  services: OrderServices,
  contractor: ContractorKey,
  offerId: string,
  actor: Actor,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { offers: [offerId] },
    (tx) => loadByOffer(services, tx, offerId),
    (state, ctx) => orders.acceptOffer(state, { offerId, contractor, actor }, ctx),
  );
  // An acceptance after respond_by breaches the respond clock.
  await fireSlaClocksAfter(services, done.change.after);
  return done.change.after;
}

/** A contractor declines its pending offer: the job moves to the next contractor at once. */
export async function declineOffer(
  services: OrderServices,
  contractor: ContractorKey,
  offerId: string,
  reason: string | null,
  actor: Actor,
): Promise<void> {
  await runOrderCommand(
    services,
    { offers: [offerId] },
    async (tx) => withBarred(services, tx, await loadByOffer(services, tx, offerId)),
    ({ state, barred }, ctx) =>
      orders.settleOffer(
        state,
        { offerId, outcome: "declined", actor, reason, decliner: contractor },
        barring(ctx, barred),
      ),
  );
}

/**
 * Settles a pending offer without its contractor's word: expired (the sweeper), or declined for it (the
 * sandbox). False when the offer was no longer pending (settled meanwhile) or not yet due.
 */
export async function settleOffer(
  services: OrderServices,
  offerId: string,
  outcome: "declined" | "expired",
  actor: Actor,
  reason: string | null = null,
): Promise<boolean> {
  const result = await tryOrderCommand(
    services,
    { offers: [offerId] },
    async (tx) => withBarred(services, tx, await loadByOffer(services, tx, offerId)),
    ({ state, barred }, ctx) =>
      orders.settleOffer(state, { offerId, outcome, actor, reason }, barring(ctx, barred)),
  );
  return result.kind === "committed";
}

/** The contractor on the job reports its progress. */
export async function reportProgress(
  services: OrderServices,
  contractor: ContractorKey,
  orderId: string,
  report: ProgressReport,
  actor: Actor,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const state = await loadOrder(services, tx, orderId);
      // A completion reads what the order needs for it (its checklist's answers, the proof its account
      // requires) in its transaction.
      const held = state?.order.contractor_id === contractor.contractorId;
      const completion =
        report.status === "completed" && state && held
          ? {
              ...(await completionRequirements(services.store, tx, state.order, services.now())),
              proof: await completionEvidence(services, tx, state.order),
            }
          : undefined;
      return { state, completion };
    },
    ({ state, completion }, ctx) => {
      const order = state?.order;
      // The check's reference: the order's ZIP or city centroid (an order names no coordinates).
      const site =
        order && (report.status === "on_site" || report.status === "completed")
          ? {
              point: sitePointOf(order.zip, order.city, order.state),
              toleranceMiles: services.config.CHECK_IN_TOLERANCE_MILES,
            }
          : undefined;
      return orders.reportProgress(
        state,
        { orderId, contractor, report, actor, site, ...(completion ? { completion } : {}) },
        ctx,
      );
    },
  );
  // An ETA after the deadline puts the arrive clock at risk at once; an arrival after it breaches it.
  await fireSlaClocksAfter(services, done.change.after);
  return done.change.after;
}

/**
 * Fires the order's service-level clocks that are due now, one change (and one event) each; returns how
 * many this call fired. Another process firing the same clock first leaves this one nothing due.
 */
export async function fireSlaClocks(services: OrderServices, orderId: string): Promise<number> {
  let fired = 0;
  // At most a risk and a breach per clock: the bound only guards against a rule that never settles.
  for (let i = 0; i < 4; i++) {
    const outcome = await tryOrderCommand(
      services,
      { orders: [orderId] },
      (tx) => loadOrder(services, tx, orderId),
      (state, ctx) => fireSlaClock(state, { actor: "system:sla" }, ctx),
    );
    if (outcome.kind !== "committed") break;
    fired++;
  }
  return fired;
}

/**
 * Flags a planned order overdue: its maintenance occurrence's window ended with the order not done
 * (domain/orders/maintenance-overdue.ts). `mark` records it on the occurrence in the same transaction;
 * false there (another process flagged it first) writes nothing.
 */
export function flagMaintenanceOverdue(
  services: OrderServices,
  orderId: string,
  occurrence: OverdueOccurrence,
  mark: (tx: WriteTx) => Promise<boolean>,
): Promise<Committed | Refusal | { kind: "lost" }> {
  return tryOrderCommand(
    services,
    { orders: [orderId] },
    (tx) => loadOrder(services, tx, orderId),
    (state, ctx) => flagOverdue(state, { actor: "system:maintenance", occurrence }, ctx),
    { guard: (tx) => mark(tx) },
  );
}

/** The clocks evaluated right after a change that may make one due. The change is committed already:
 * a failure here must not fail it, and the SLA watch's next round evaluates the same clocks. */
async function fireSlaClocksAfter(services: OrderServices, order: Order): Promise<void> {
  // Judged on the committed order first, so that a change with nothing due costs no second write.
  if (dueFirings(order, services.now()).length === 0) return;
  try {
    await fireSlaClocks(services, order.id);
  } catch {
    // Left to the SLA watch (workers/sla-watch.ts), which retries every SLA_WATCH_INTERVAL_MS.
  }
}

/** The contractor on an active job asks for a higher NTE. */
export async function requestNte(
  services: OrderServices,
  contractor: ContractorKey,
  orderId: string,
  cents: number,
  reason: string,
  actor: Actor,
): Promise<NteRequest> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const state = await loadOrder(services, tx, orderId);
      return { state, requests: state ? await services.store.orders.nteRequests(orderId, tx) : [] };
    },
    ({ state, requests }, ctx) =>
      orders.requestNte(state, { orderId, contractor, cents, reason, actor, requests }, ctx),
  );
  const row = done.change.nte.create;
  if (!row) throw new Error("an NTE request was committed without its row");
  return row;
}

/** The contractor invoices a completed job, within the NTE in force. */
export async function invoice(
  services: OrderServices,
  contractor: ContractorKey,
  orderId: string,
  amount: number | Itemised,
  actor: Actor,
): Promise<Order> {
  const bill = typeof amount === "number" ? { cents: amount } : { invoice: amount };
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    (tx) => loadOrder(services, tx, orderId),
    (state, ctx) => orders.invoiceJob(state, { orderId, contractor, actor, ...bill }, ctx),
  );
  return done.change.after;
}

/** The contractor revises its invoice before approval: the next version. */
export async function reviseInvoice(
  services: OrderServices,
  contractor: ContractorKey,
  orderId: string,
  invoice: Itemised,
  actor: Actor,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const state = await loadOrder(services, tx, orderId);
      const versions = state ? await services.store.orders.invoiceVersions(orderId, tx) : [];
      return { state, previous: versions.at(-1) ?? null };
    },
    ({ state, previous }, ctx) =>
      orders.reviseInvoice(state, { orderId, contractor, invoice, previous, actor }, ctx),
  );
  return done.change.after;
}

/** The caller (or a dispatcher) cancels an order it may see. */
export async function cancelOrder(
  services: OrderServices,
  orderId: string,
  reason: string | null,
  role: Role,
  actor: Actor,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    (tx) => loadOrder(services, tx, orderId),
    (state, ctx) => orders.cancelOrder(present(state, orderId), { role, reason, actor }, ctx),
  );
  return done.change.after;
}

/** A dispatcher assigns or reassigns a contractor by hand (an override). */
export async function assign(
  services: OrderServices,
  orderId: string,
  livemode: boolean,
  contractorId: string,
  reason: string,
  actor: Actor,
  complianceOverride: string | null = null,
  start?: Date,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId], contractors: [contractorId] },
    async (tx) => {
      const state = await loadOrder(services, tx, orderId);
      return {
        contractor: await services.store.contractors.standing(contractorId, tx),
        state,
        // The order's account's list, in the transaction: a stale copy never lets an assignment through.
        entries:
          state && state.order.livemode === livemode
            ? await services.store.doNotDispatch.ofAccount(state.order.account_id, livemode, tx)
            : [],
      };
    },
    ({ contractor, state, entries }, ctx) =>
      (state && exclusionRefusal(entries, contractorId, state.order.trade)) ??
      orders.assignContractor(
        state,
        { orderId, livemode, contractorId, contractor, reason, complianceOverride, actor, start },
        ctx,
      ),
    // A start is the dispatcher's exact word: there or refused; else the job goes where it fits, anyway.
    start ? { strict: true, exact: start.getTime() } : { strict: false },
  );
  // An assignment after respond_by is the first acceptance come late: the respond clock's breach.
  await fireSlaClocksAfter(services, done.change.after);
  return done.change.after;
}

/** The dispatch team moves the order's arrival window; its contractor's time is placed again, strictly
 * (exactly at `start`, when given). */
export async function reschedule(
  services: OrderServices,
  orderId: string,
  livemode: boolean,
  window: { start: Date; end: Date },
  reason: string,
  actor: Actor,
  start?: Date,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const state = await loadOrder(services, tx, orderId);
      // Where the job's block starts now: a start equal to it in the same window moves nothing.
      const holder = start ? state?.order.contractor_id : null;
      const held = holder ? await services.store.contractors.commitments([holder], tx) : [];
      const current = held.find(([, c]) => c.orderId === orderId)?.[1];
      return { state, currentStart: current ? new Date(current.start).toISOString() : null };
    },
    ({ state, currentStart }, ctx) =>
      orders.rescheduleOrder(state, { orderId, livemode, window, reason, actor, start, currentStart }, ctx),
    start ? { strict: true, exact: start.getTime() } : undefined,
  );
  // A window moved into the past's reach (or away from it) may be due its clock's firing now.
  await fireSlaClocksAfter(services, done.change.after);
  return done.change.after;
}

/** The caller approves or rejects an NTE increase. */
export async function decideNte(
  services: OrderServices,
  orderId: string,
  requestId: string,
  decision: "approved" | "rejected",
  reason: string | null,
  actor: Actor,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => ({
      state: present(await loadOrder(services, tx, orderId), orderId),
      request: await services.store.orders.nteRequestById(requestId, tx),
    }),
    ({ state, request }, ctx) =>
      orders.decideNte(state, { request, requestId, decision, reason, actor }, ctx),
  );
  return done.change.after;
}

/** The account (or its policy) approves, rejects or sends back the latest version of its invoice. */
export async function decideInvoice(
  services: OrderServices,
  orderId: string,
  cmd: Omit<Parameters<typeof invoiceDecisions.decideInvoice>[1], "latest">,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => ({
      state: present(await loadOrder(services, tx, orderId), orderId),
      versions: await services.store.orders.invoiceVersions(orderId, tx),
    }),
    ({ state, versions }, ctx) =>
      invoiceDecisions.decideInvoice(state, { ...cmd, latest: versions.at(-1) ?? null }, ctx),
  );
  return done.change.after;
}

/** The account records its payment of the approved invoice. */
export async function payInvoice(
  services: OrderServices,
  orderId: string,
  cmd: Omit<Parameters<typeof invoiceDecisions.payInvoice>[1], "approval">,
): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => ({
      state: present(await loadOrder(services, tx, orderId), orderId),
      decisions: await services.store.orders.invoiceDecisions(orderId, tx),
    }),
    ({ state, decisions }, ctx) =>
      invoiceDecisions.payInvoice(
        state,
        { ...cmd, approval: decisions.findLast((d) => d.decision === "approved") ?? null },
        ctx,
      ),
  );
  return done.change.after;
}

// --- Counter-offers (domain/orders/counter-commands.ts) ---------------------------------------------

/** A dispatcher's kind of placement: an accepted counter's window is the contractor's own word, so its
 * job is placed there even where its calendar says otherwise. */
const AS_AGREED: Timing = { strict: false };

/** The contractor counters its pending offer; the account's policy, read in the transaction, may accept
 * it at once. */
export async function counterOffer(
  services: OrderServices,
  cmd: Omit<counters.CounterCommand, "policy">,
): Promise<Committed> {
  const done = await runOrderCommand(
    services,
    { offers: [cmd.offerId] },
    async (tx) => {
      const state = await loadByOffer(services, tx, cmd.offerId);
      const policy = state
        ? await services.store.counters.policy(state.order.account_id, state.order.livemode, tx)
        : undefined;
      return { state, policy: policy ?? null };
    },
    ({ state, policy }, ctx) => counters.counterOffer(state, { ...cmd, policy }, ctx),
    AS_AGREED,
  );
  await fireSlaClocksAfter(services, done.change.after);
  return done;
}

/** An order with its counters, read in the command's transaction. */
async function withCounters(services: OrderServices, tx: WriteTx, orderId: string) {
  const state = await loadOrder(services, tx, orderId);
  return { state, counters: state ? await services.store.counters.ofOrder(orderId, tx) : [] };
}

/** The account accepts the counter waiting on its order. */
export async function acceptCounter(services: OrderServices, orderId: string, actor: Actor): Promise<Order> {
  const done = await runOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const loaded = await withCounters(services, tx, orderId);
      const order = loaded.state?.order;
      // The account's list in the transaction: a contractor it excluded while its counter waited is not
      // accepted (the account declines the counter instead).
      const entries = order
        ? await services.store.doNotDispatch.ofAccount(order.account_id, order.livemode, tx)
        : [];
      return { ...loaded, entries };
    },
    ({ state, counters: all, entries }, ctx) =>
      (state?.order.contractor_id &&
        exclusionRefusal(entries, state.order.contractor_id, state.order.trade)) ||
      counters.acceptCounter(state, { orderId, counters: all, actor }, ctx),
    AS_AGREED,
  );
  await fireSlaClocksAfter(services, done.change.after);
  return done.change.after;
}

/** The account declines the counter waiting on its order (the cascade moves on), or the sweeper expires
 * it; a refusal is the answer's (settled meanwhile, or not yet due). */
export async function endCounter(
  services: OrderServices,
  orderId: string,
  outcome: "declined" | "expired",
  actor: Actor,
  reason: string | null,
): Promise<Committed | Refusal> {
  const outcomeOf = await tryOrderCommand(
    services,
    { orders: [orderId] },
    async (tx) => {
      const { state, counters: all } = await withCounters(services, tx, orderId);
      return { ...(await withBarred(services, tx, state)), counters: all };
    },
    ({ state, barred, counters: all }, ctx) =>
      counters.endCounter(state, { orderId, counters: all, outcome, actor, reason }, barring(ctx, barred)),
  );
  if (outcomeOf.kind === "lost") throw new Error("a command without a guard lost its guard");
  return outcomeOf;
}

/** As endCounter, answering a refusal with its problem (the operations' form). */
export async function declineCounter(
  services: OrderServices,
  orderId: string,
  actor: Actor,
  reason: string | null,
): Promise<Order> {
  const outcome = await endCounter(services, orderId, "declined", actor, reason);
  if (outcome.kind === "refused") throw refusalError(outcome);
  return outcome.change.after;
}
