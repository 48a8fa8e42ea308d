// What every simulated order's lane shares: the virtual clock, the services, the keys (a contractor's is
// issued when it first acts), the dispatch team's view of the pool and the counters; and the in-process
// invoker that runs an operation through the gate at the lane's virtual time, as a transport does.

import type { z } from "zod";
import type { Actor } from "../audit/record.js";
import { compliantThrough, dayOf } from "../domain/compliance.js";
import type { Contractor } from "../domain/contractor.js";
import type { Rng } from "../domain/random.js";
import { newId } from "../ids.js";
import { asApiError } from "../operations/kernel/failures.js";
import { admit, execute } from "../operations/kernel/gate.js";
import type {
  Operation,
  OperationContext,
  ReceivedUpload,
  Services,
} from "../operations/kernel/operation.js";
import { fileTooLarge } from "../operations/orders/attachment-upload.js";
import { settleOffer } from "../operations/orders/command-runner.js";
import type { OrderPlan } from "./demand.js";
import type { VirtualTime } from "./virtual-time.js";

/** Who issues and revokes the simulator's keys and imports a generated pool: the operator's CLI. */
export const SIM_OPERATOR: Actor = "operator:cli";
const CLIENT_IP = "127.0.0.1";

export type Result<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

export interface SimulationCounters {
  ordersCreated: number;
  unmatchedAtCreation: number;
  offersAccepted: number;
  offersDeclined: number;
  offersExpired: number;
  callerCancels: number;
  dispatcherCancels: number;
  cannotComplete: number;
  /** Dispatcher overrides: assigned from needs_dispatcher, after cannot_complete, and reassigned. */
  overridesAssigned: number;
  overridesAfterFailure: number;
  overridesReassigned: number;
  nteRequests: number;
  nteApproved: number;
  nteRejected: number;
  completedOverNte: number;
  completedWithinNte: number;
  completedWithoutNte: number;
  invoices: number;
  /** Proof of work: jobs whose contractor added a photo, the site contact's signature, and jobs whose
   * checklist it answered (before completing). */
  proofPhotos: number;
  proofSignatures: number;
  checklistsAnswered: number;
  /** Orders whose play stopped on an operation's unexpected refusal (a simulator bug if ever > 0). */
  ordersStuck: number;
}

function emptyCounters(): SimulationCounters {
  return {
    ordersCreated: 0,
    unmatchedAtCreation: 0,
    offersAccepted: 0,
    offersDeclined: 0,
    offersExpired: 0,
    callerCancels: 0,
    dispatcherCancels: 0,
    cannotComplete: 0,
    overridesAssigned: 0,
    overridesAfterFailure: 0,
    overridesReassigned: 0,
    nteRequests: 0,
    nteApproved: 0,
    nteRejected: 0,
    completedOverNte: 0,
    completedWithinNte: 0,
    completedWithoutNte: 0,
    invoices: 0,
    proofPhotos: 0,
    proofSignatures: 0,
    checklistsAnswered: 0,
    ordersStuck: 0,
  };
}

/** An upload as a transport reads it: a file over `maxBytes` refused (413) as the multipart reader does. */
function readWithin(upload: ReceivedUpload, maxBytes: number): ReceivedUpload {
  if (upload.file && upload.file.bytes.length > maxBytes) throw fileTooLarge(maxBytes);
  return upload;
}

/** What every order's lane shares: the clock, the services, the keys, the pool as dispatchers know it. */
export class World {
  readonly counters = emptyCounters();
  readonly calls = new Map<string, number>();
  readonly refused = new Map<string, number>();
  readonly issuedKeyIds: string[] = [];
  readonly orderIds: string[] = [];
  sweeps = 0;
  /** The trades whose live orders of the account get a checklist (templates in force when the run began:
   * the simulator is the store's only client while it runs). Their contractors read and answer it. */
  checklistTrades: ReadonlySet<string> = new Set();
  callerKey = "";
  dispatcherKey = "";
  private readonly contractorKeys = new Map<string, Promise<string>>();
  private readonly baseUrl: string;

  constructor(
    readonly clock: VirtualTime,
    readonly services: Services,
    readonly seed: number,
    private readonly account: string,
    /** Active live contractors by `trade|state`, best-rated first. */
    private readonly byBucket: Map<string, Contractor[]>,
  ) {
    this.baseUrl = services.config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${services.config.PORT}`;
  }

  async issue(kind: "account" | "dispatcher" | "contractor", contractorId?: string): Promise<string> {
    const issued = await this.services.keys.issue({
      accountName: this.account,
      mode: "live",
      label: `simulator ${kind}`,
      actor: SIM_OPERATOR,
      kind,
      contractorId: contractorId ?? null,
    });
    this.issuedKeyIds.push(issued.id);
    return issued.key;
  }

  /** A contractor's own key, issued the first time the contractor acts. */
  contractorKey(contractorId: string): Promise<string> {
    let key = this.contractorKeys.get(contractorId);
    if (!key) {
      key = this.issue("contractor", contractorId);
      this.contractorKeys.set(contractorId, key);
    }
    return key;
  }

  /** Runs an operation through the gate and validation with `apiKey`, at the lane's virtual time; an
   * upload operation reads `upload` as a transport's multipart body (within the size limit it asks). */
  async call<I extends z.ZodType, O extends z.ZodType>(
    op: Operation<I, O>,
    apiKey: string | undefined,
    input: z.input<I>,
    upload?: ReceivedUpload,
  ): Promise<Result<z.input<O>>> {
    this.calls.set(op.name, (this.calls.get(op.name) ?? 0) + 1);
    // Received before the key is checked, as a transport receives a request.
    const receivedAt = this.services.now();
    const receivedHr = process.hrtime.bigint();
    try {
      const admission = await admit(op, this.services, { apiKey, clientIp: CLIENT_IP });
      const ctx: OperationContext = {
        services: this.services,
        requestId: newId("req"),
        principal: admission.principal,
        baseUrl: this.baseUrl,
        receivedAt,
        receivedHr,
        idempotencyKey: undefined,
        rawInput: input,
        setHeader: () => {},
        ...(upload ? { readUpload: async (maxBytes: number) => readWithin(upload, maxBytes) } : {}),
      };
      return { ok: true, value: (await execute(op, ctx, input)) as z.input<O> };
    } catch (error) {
      const expected = asApiError(error);
      if (!expected) throw error;
      const what = `${op.name} ${expected.code}`;
      this.refused.set(what, (this.refused.get(what) ?? 0) + 1);
      return { ok: false, code: expected.code, message: expected.message };
    }
  }

  /** The sweep step for one offer whose deadline passed (what the server's sweeper does for each due offer). */
  async expire(offerId: string): Promise<void> {
    if (await settleOffer(this.services, offerId, "expired", "system:dispatch")) this.sweeps++;
  }

  /**
   * The contractor a dispatcher picks by hand: one of the best-rated five in the trade and state with
   * capacity left, insurance and license valid today (a dispatcher does not override compliance in the
   * simulation), not yet tried on this order (emergency-capable for emergencies, when there is one).
   */
  pickContractor(plan: OrderPlan, exclude: ReadonlySet<string>, rng: Rng): string | null {
    const index = this.services.pool.index;
    const today = dayOf(this.services.now());
    const bucket = this.byBucket.get(`${plan.trade}|${plan.state}`) ?? [];
    const free = bucket.filter(
      (c) => !exclude.has(c.id) && index.jobsOf(c.id) < c.maxActiveJobs && compliantThrough(c) >= today,
    );
    const capable = plan.urgency === "emergency" ? free.filter((c) => c.emergencyCapable) : free;
    const choices = (capable.length > 0 ? capable : free).slice(0, 5);
    const x = rng();
    return choices.length === 0 ? null : (choices[Math.floor(x * choices.length)] as Contractor).id;
  }
}
