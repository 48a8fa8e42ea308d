// The race suite: every pair of commands that can meet on one order, fired concurrently, 20 orders at a
// time, on SQLite (in process, where group commit puts concurrent commands in one transaction) and on
// PostgreSQL with two and with four server processes (one command of each pair to each of two processes;
// with four, an order's pair goes to processes 0 and 1 or to 2 and 3 by its id, so the four commit side
// by side; an offer's expiry runs in this test's process, one more). After every batch the order invariants are read from the database
// (test/helpers/order-invariants.ts), and no answer may be a 5xx. On PostgreSQL the database's own
// deadlock counter must not move. The counts per pair are printed for the record.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { ContractorRefs } from "../src/auth/contractor-refs.js";
import { loadConfig } from "../src/config.js";
import { complianceIssues, dayOf } from "../src/domain/compliance.js";
import type { Contractor } from "../src/domain/contractor.js";
import { ContractorPool } from "../src/operations/kernel/contractor-pool.js";
import { checklistOf } from "../src/operations/orders/checklist-state.js";
import { endCounter, type OrderServices, settleOffer } from "../src/operations/orders/command-runner.js";
import { openPostgresStore } from "../src/storage/postgres.js";
import { type ChildServer, startChildServer } from "./helpers/child-server.js";
import { createHarness } from "./helpers/harness.js";
import { orderAnomalies } from "./helpers/order-invariants.js";
import { admin, postgresUrl, runSchemaPrefix } from "./helpers/test-store.js";

const ROUNDS = 20;
const ORDER = "/api/dispatch/v1/order";
const CANCEL = "/api/dispatch/v1/orders/cancel";
const NTE_DECISION = "/api/dispatch/v1/orders/nte-decision";
const ACCEPT = "/api/contractor/v1/offers/accept";
const DECLINE = "/api/contractor/v1/offers/decline";
const REPORT = "/api/contractor/v1/jobs/status";
const CHECKLIST = "/api/contractor/v1/jobs/checklist";
const NTE_REQUEST = "/api/contractor/v1/jobs/nte-request";
const INVOICE = "/api/contractor/v1/jobs/invoice";
const REVISE = "/api/contractor/v1/jobs/invoice/revise";
const INVOICE_DECISION = "/api/dispatch/v1/orders/invoice-decision";
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const DISPATCHER_CANCEL = "/api/dispatcher/v1/orders/cancel";
const COUNTER = "/api/contractor/v1/offers/counter";
const COUNTER_ACCEPT = "/api/dispatch/v1/orders/counter-accept";
const COUNTER_DECLINE = "/api/dispatch/v1/orders/counter-decline";

const SERVER_ENV = {
  SANDBOX_SIMULATION: "false",
  // Callbacks to a closed port on this machine: events are written to the outbox, deliveries fail fast.
  PROBE_ALLOW_PRIVATE_NETWORKS: "true",
  KEY_RATE_LIMIT_PER_MINUTE: "1000000",
  KEY_RATE_LIMIT_BURST: "1000000",
  // Each PostgreSQL process learns of capacity the other (or this test process) gave back at its pool
  // refresh: often, so that the order-placing process's matcher is soon in step (see Scene.offered).
  POOL_REFRESH_MS: "200",
};

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A store and two ways in (the same process twice on SQLite; two processes on PostgreSQL). */
interface Target {
  name: string;
  services: OrderServices;
  keys: ApiKeyService;
  call(proc: 0 | 1, path: string, body: unknown, key: string): Promise<Answer>;
  /** What the servers logged, to look for deadlocks. */
  logs(): string;
  /** The database's deadlock count so far (PostgreSQL), or null. */
  deadlocks(): Promise<number | null>;
  close(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  let logged = "";
  const h = await createHarness(SERVER_ENV, {
    logDestination: new Writable({
      write(chunk, _encoding, done) {
        logged += chunk.toString();
        done();
      },
    }),
  });
  return {
    name: "sqlite",
    services: h.services,
    keys: h.services.keys,
    async call(_proc, path, body, key) {
      const res = await h.post(path, body, { "x-api-key": key });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    },
    logs: () => logged,
    deadlocks: async () => null,
    close: () => h.close(),
  };
}

/** PostgreSQL with `processes` server processes (2 or 4). */
async function postgresTarget(processes: 2 | 4): Promise<Target> {
  const schema = `${runSchemaPrefix()}race${Math.random().toString(36).slice(2, 10)}`;
  await admin(postgresUrl(), (c) => c.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(postgresUrl());
  url.searchParams.set("options", `-c search_path=${schema}`);
  const env = {
    ...SERVER_ENV,
    DATABASE_URL: url.toString(),
    DATABASE_POOL_SIZE: "6",
    DATA_DIR: mkdtempSync(join(tmpdir(), "fd-race-")),
  };
  const servers: ChildServer[] = [await startChildServer(env, 60_000)]; // migrates, seeds the sandbox pool
  servers.push(
    ...(await Promise.all(Array.from({ length: processes - 1 }, () => startChildServer(env, 60_000)))),
  );
  const store = openPostgresStore(url.toString(), { poolSize: 4, schema });
  const pool = new ContractorPool(store);
  await pool.load();
  const services: OrderServices = {
    store,
    pool,
    config: loadConfig({ ...env, LOG_LEVEL: "silent" }),
    refs: new ContractorRefs(Buffer.alloc(32, 7)),
    now: () => new Date(),
  };
  const deadlocks = () =>
    admin(postgresUrl(), async (c) => {
      const { rows } = await c.query<{ deadlocks: string }>(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
      );
      return Number(rows[0]?.deadlocks ?? 0);
    });
  /** The process a command goes to: `proc`, or with four processes `proc + 2` for half of the orders. */
  const processOf = (proc: 0 | 1, body: unknown): number => {
    if (processes === 2) return proc;
    const named = body as { order_id?: string; offer_id?: string };
    const id = named.order_id ?? named.offer_id ?? "";
    let h = 0;
    for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
    return proc + 2 * (Math.abs(h) % 2);
  };
  return {
    name: `postgres x${processes}`,
    services,
    keys: new ApiKeyService(store, 0),
    async call(proc, path, body, key) {
      const res = await fetch(`${servers[processOf(proc, body)]?.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    logs: () => servers.map((s) => s.output()).join("\n"),
    deadlocks,
    async close() {
      await Promise.all(servers.map((s) => s.kill()));
      await store.close();
      // The schema is dropped by the global teardown, after every worker is done (test-store.ts).
    },
  };
}

/** One order per round in the state a pair needs, made through the API; what the pair's actions need. */
interface Prepared {
  orderId: string;
  offerId: string;
  /** The contractor the order is offered to, or held by. */
  holder: string;
  holderKey: string;
  nteRequestId?: string;
  /** A contractor both commands of a pair assign the job to. */
  target?: string;
}

class Scene {
  caller = "";
  dispatcher = "";
  private contractorKeys = new Map<string, string>();
  pool: Contractor[] = [];

  constructor(readonly t: Target) {}

  async init(): Promise<void> {
    const issue = (kind: "account" | "dispatcher") =>
      this.t.keys.issue({
        accountName: kind === "account" ? "race" : "ops",
        mode: "test",
        actor: "operator:test",
        kind,
        ratePerMinute: 1_000_000,
        burst: 1_000_000,
      });
    this.caller = (await issue("account")).key;
    this.dispatcher = (await issue("dispatcher")).key;
    this.pool = (await this.t.services.store.contractors.load()).filter(
      (c) =>
        c.pool === "sandbox" &&
        c.trades.includes("plumbing") &&
        c.states.includes("CA") &&
        c.active &&
        !c.excluded &&
        // Only contractors that may take work today: an assignment to one that may not is refused (409).
        complianceIssues(c, dayOf(new Date())).length === 0,
    );
  }

  async keyOf(contractorId: string): Promise<string> {
    let key = this.contractorKeys.get(contractorId);
    if (!key) {
      key = (
        await this.t.keys.issue({
          accountName: "crew",
          mode: "test",
          actor: "operator:test",
          kind: "contractor",
          contractorId,
          ratePerMinute: 1_000_000,
          burst: 1_000_000,
        })
      ).key;
      this.contractorKeys.set(contractorId, key);
    }
    return key;
  }

  private next = 0;
  /** A contractor of the pool other than those given (an assignment's target): round-robin over the
   * whole pool, so that assignments spread and find capacity. */
  other(...not: string[]): string {
    const choices = this.pool.filter((x) => !not.includes(x.id));
    const c = choices[this.next++ % choices.length];
    if (!c) throw new Error("the sandbox pool has too few CA plumbers");
    return c.id;
  }

  private async ok(proc: 0 | 1, path: string, body: unknown, key: string): Promise<Answer> {
    const res = await this.t.call(proc, path, body, key);
    if (res.status !== 200) throw new Error(`setup ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  }

  /**
   * An order offered to a contractor. With two processes, the one that places the orders learns of
   * capacity given back elsewhere (by the other process, or this one's expiries) only at its next pool
   * refresh: until then its matcher may count the CA plumbers busy and hand the order to a dispatcher
   * (seen on CI on PostgreSQL, on a weekend, when the plumbers' hours are few). That is not this suite's
   * subject: such an order is cancelled and another placed once the process has refreshed (a few tries).
   */
  async offered(): Promise<Prepared> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.ok(
        0,
        ORDER,
        {
          trade: "plumbing",
          location: { state: "CA", zip: "94103" },
          description: "race",
          urgency: "routine",
          nte_cents: 50_000,
          callback_url: "http://127.0.0.1/race-hook",
        },
        this.caller,
      );
      const orderId = res.body.order_id as string;
      const offer = (await this.t.services.store.orders.offersOf(orderId)).find(
        (o) => o.status === "pending",
      );
      if (offer) return this.prepared(orderId, offer.id, offer.contractor_id);
      if (attempt >= 20)
        throw new Error(`order ${orderId} was not offered (${res.body.status}), ${attempt} tries`);
      await this.ok(
        0,
        DISPATCHER_CANCEL,
        { order_id: orderId, reason: "race setup: not offered" },
        this.dispatcher,
      );
      await new Promise((resolve) => setTimeout(resolve, 250)); // the next pool refresh (POOL_REFRESH_MS)
    }
  }

  private async prepared(orderId: string, offerId: string, holder: string): Promise<Prepared> {
    return { orderId, offerId, holder, holderKey: await this.keyOf(holder) };
  }

  async accepted(): Promise<Prepared> {
    const p = await this.offered();
    await this.ok(0, ACCEPT, { offer_id: p.offerId }, p.holderKey);
    return p;
  }

  async enRoute(): Promise<Prepared> {
    const p = await this.accepted();
    await this.ok(1, REPORT, { order_id: p.orderId, status: "en_route", eta_minutes: 30 }, p.holderKey);
    return p;
  }

  /** The job's required checklist items answered (the sandbox's starter checklist: yes/no items), as its
   * contractor on site does before completing. */
  private async answerRequired(p: Prepared): Promise<void> {
    const { store } = this.t.services;
    const order = await store.orders.byId(p.orderId);
    if (!order) throw new Error(`setup: no order ${p.orderId}`);
    const { checklist } = await checklistOf(store, order, new Date());
    const answers = checklist.items
      .filter((i) => i.required && i.kind === "yes_no")
      .map((i) => ({ item_id: i.item_id, value: true }));
    if (answers.length > 0) await this.ok(0, CHECKLIST, { order_id: p.orderId, answers }, p.holderKey);
  }

  async completed(): Promise<Prepared> {
    const p = await this.enRoute();
    await this.ok(0, REPORT, { order_id: p.orderId, status: "on_site" }, p.holderKey);
    await this.answerRequired(p);
    await this.ok(
      1,
      REPORT,
      { order_id: p.orderId, status: "completed", final_cost_cents: 45_000 },
      p.holderKey,
    );
    return p;
  }

  /** Completed and invoiced (version 1 of its invoice, waiting for the account). */
  async invoiced(): Promise<Prepared> {
    const p = await this.completed();
    await this.ok(0, INVOICE, { order_id: p.orderId, amount_cents: 45_000 }, p.holderKey);
    return p;
  }

  async withNte(p: Prepared): Promise<Prepared> {
    const res = await this.ok(
      0,
      NTE_REQUEST,
      { order_id: p.orderId, requested_nte_cents: 60_000, reason: "corroded pipe" },
      p.holderKey,
    );
    return { ...p, nteRequestId: res.body.request_id as string };
  }

  /** An order whose contractor answered its offer with a counter, waiting on the account. */
  async countered(): Promise<Prepared> {
    const p = await this.offered();
    await this.ok(1, COUNTER, { offer_id: p.offerId, price_cents: 47_123 }, p.holderKey);
    return p;
  }

  /** The sweeper's expiry of the order's waiting counter, in this process, as if its deadline passed. */
  async expireCounter(p: Prepared): Promise<Answer> {
    const [counter] = await this.t.services.store.counters.ofOrder(p.orderId);
    const due = new Date(Date.parse(counter?.deadline_at ?? "") + 1_000);
    const done = await endCounter(
      { ...this.t.services, now: () => due },
      p.orderId,
      "expired",
      "system:dispatch",
      null,
    );
    return { status: done.kind === "committed" ? 200 : 409, body: {} };
  }

  /** The sweeper's expiry of the order's offer, in this process (a third one), as if its deadline passed. */
  async expire(p: Prepared): Promise<Answer> {
    const offer = await this.t.services.store.orders.offerById(p.offerId);
    const due = new Date(Date.parse(offer?.deadline_at ?? "") + 1_000);
    const done = await settleOffer(
      { ...this.t.services, now: () => due },
      p.offerId,
      "expired",
      "system:dispatch",
    );
    return { status: done ? 200 : 409, body: {} };
  }
}

type Action = (s: Scene, p: Prepared) => Promise<Answer>;

const decline: Action = (s, p) => s.t.call(0, DECLINE, { offer_id: p.offerId, reason: "busy" }, p.holderKey);
const accept =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(proc, ACCEPT, { offer_id: p.offerId }, p.holderKey);
const callerCancel: Action = (s, p) => s.t.call(1, CANCEL, { order_id: p.orderId, reason: "race" }, s.caller);
const dispatcherCancel: Action = (s, p) =>
  s.t.call(1, DISPATCHER_CANCEL, { order_id: p.orderId, reason: "race" }, s.dispatcher);
const assignOther =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(
      proc,
      ASSIGN,
      { order_id: p.orderId, contractor_id: s.other(p.holder), reason: "race" },
      s.dispatcher,
    );
const assignTarget =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(proc, ASSIGN, { order_id: p.orderId, contractor_id: p.target, reason: "race" }, s.dispatcher);
const decide =
  (decision: "approve" | "reject", proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(proc, NTE_DECISION, { order_id: p.orderId, request_id: p.nteRequestId, decision }, s.caller);
const report =
  (status: "on_site" | "cannot_complete", proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(
      proc,
      REPORT,
      status === "on_site"
        ? { order_id: p.orderId, status }
        : { order_id: p.orderId, status, reason: "no parts" },
      p.holderKey,
    );
const invoice =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(proc, INVOICE, { order_id: p.orderId, amount_cents: 45_000 }, p.holderKey);
const expire: Action = (s, p) => s.expire(p);
/** The account decides version 1 of the invoice (a revision sent first makes it stale: 409). */
const decideInvoice =
  (decision: "approve" | "request_revision", proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(
      proc,
      INVOICE_DECISION,
      {
        order_id: p.orderId,
        decision,
        version: 1,
        ...(decision === "request_revision" ? { note: "split the labour" } : {}),
      },
      s.caller,
    );
const revise =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(
      proc,
      REVISE,
      { order_id: p.orderId, lines: [{ kind: "labour", hours: 2, rate_cents: 20_000 }] },
      p.holderKey,
    );
const counter: Action = (s, p) =>
  s.t.call(0, COUNTER, { offer_id: p.offerId, price_cents: 47_123 }, p.holderKey);
const counterAccept =
  (proc: 0 | 1): Action =>
  (s, p) =>
    s.t.call(proc, COUNTER_ACCEPT, { order_id: p.orderId }, s.caller);
const counterDecline: Action = (s, p) =>
  s.t.call(1, COUNTER_DECLINE, { order_id: p.orderId, reason: "race" }, s.caller);
const expireCounter: Action = (s, p) => s.expireCounter(p);

/** `exclusive`: one of the two must fail once the other is done (two accepts, two decisions, ...). */
const PAIRS: Array<{
  name: string;
  setup: (s: Scene) => Promise<Prepared>;
  a: Action;
  b: Action;
  exclusive?: boolean;
}> = [
  { name: "decline vs cancel", setup: (s) => s.offered(), a: decline, b: callerCancel },
  { name: "decline vs assign", setup: (s) => s.offered(), a: decline, b: assignOther(1) },
  { name: "cancel vs expiry", setup: (s) => s.offered(), a: callerCancel, b: expire },
  { name: "decline vs expiry", setup: (s) => s.offered(), a: decline, b: expire, exclusive: true },
  { name: "accept vs accept", setup: (s) => s.offered(), a: accept(0), b: accept(1), exclusive: true },
  { name: "accept vs cancel", setup: (s) => s.offered(), a: accept(0), b: callerCancel },
  { name: "accept vs expiry", setup: (s) => s.offered(), a: accept(0), b: expire, exclusive: true },
  { name: "accept vs assign", setup: (s) => s.offered(), a: accept(0), b: assignOther(1) },
  { name: "reassign vs reassign", setup: (s) => s.accepted(), a: assignOther(0), b: assignOther(1) },
  {
    name: "reassign vs reassign, one target",
    setup: (s) => s.accepted().then((p) => ({ ...p, target: s.other(p.holder) })),
    a: assignTarget(0),
    b: assignTarget(1),
    exclusive: true,
  },
  {
    name: "cannot_complete vs reassign",
    setup: (s) => s.accepted(),
    a: report("cannot_complete", 0),
    b: assignOther(1),
  },
  {
    name: "approve vs reject",
    setup: (s) => s.accepted().then((p) => s.withNte(p)),
    a: decide("approve", 0),
    b: decide("reject", 1),
    exclusive: true,
  },
  {
    name: "approve vs on_site",
    setup: (s) => s.enRoute().then((p) => s.withNte(p)),
    a: decide("approve", 0),
    b: report("on_site", 1),
  },
  {
    name: "approve vs invoice",
    setup: (s) => s.completed().then((p) => s.withNte(p)),
    a: decide("approve", 0),
    b: invoice(1),
  },
  {
    name: "approve vs cancel",
    setup: (s) => s.accepted().then((p) => s.withNte(p)),
    a: decide("approve", 0),
    b: dispatcherCancel,
  },
  { name: "invoice vs invoice", setup: (s) => s.completed(), a: invoice(0), b: invoice(1), exclusive: true },
  {
    name: "invoice approve vs revise",
    setup: (s) => s.invoiced(),
    a: decideInvoice("approve", 0),
    b: revise(1),
    exclusive: true,
  },
  {
    name: "invoice approve vs approve",
    setup: (s) => s.invoiced(),
    a: decideInvoice("approve", 0),
    b: decideInvoice("approve", 1),
    exclusive: true,
  },
  {
    name: "invoice approve vs revision request",
    setup: (s) => s.invoiced(),
    a: decideInvoice("approve", 0),
    b: decideInvoice("request_revision", 1),
    exclusive: true,
  },
  { name: "counter vs accept", setup: (s) => s.offered(), a: counter, b: accept(1), exclusive: true },
  { name: "counter vs offer expiry", setup: (s) => s.offered(), a: counter, b: expire, exclusive: true },
  {
    name: "counter accept vs counter accept",
    setup: (s) => s.countered(),
    a: counterAccept(0),
    b: counterAccept(1),
    exclusive: true,
  },
  {
    name: "counter accept vs counter decline",
    setup: (s) => s.countered(),
    a: counterAccept(0),
    b: counterDecline,
    exclusive: true,
  },
  {
    name: "counter accept vs counter expiry",
    setup: (s) => s.countered(),
    a: counterAccept(0),
    b: expireCounter,
    exclusive: true,
  },
  { name: "counter decline vs cancel", setup: (s) => s.countered(), a: counterDecline, b: callerCancel },
  { name: "counter accept vs assign", setup: (s) => s.countered(), a: counterAccept(0), b: assignOther(1) },
];

const TARGETS: Array<[string, () => Promise<Target>]> = [
  ["sqlite", sqliteTarget],
  ...(process.env.TEST_DATABASE_URL
    ? ([
        ["postgres, 2 processes", () => postgresTarget(2)],
        ["postgres, 4 processes", () => postgresTarget(4)],
      ] as Array<[string, () => Promise<Target>]>)
    : []),
];

const summary: string[] = [];
afterAll(() => {
  if (summary.length > 0)
    process.stdout.write(`\nrace suite (${ROUNDS} rounds per pair):\n${summary.join("\n")}\n`);
});

describe.each(TARGETS)("races on one order (%s)", (_name, make) => {
  let target: Target;
  let scene: Scene;
  let deadlocksBefore: number | null = null;

  it("sets up", async () => {
    target = await make();
    scene = new Scene(target);
    await scene.init();
    deadlocksBefore = await target.deadlocks();
  }, 180_000);

  for (const pair of PAIRS) {
    it(`${pair.name}: one winner, every invariant holds, no 5xx`, async () => {
      const prepared: Prepared[] = [];
      for (let i = 0; i < ROUNDS; i += 5) {
        prepared.push(...(await Promise.all(Array.from({ length: 5 }, () => pair.setup(scene)))));
      }
      const answers = await Promise.all(
        prepared.map((p) => Promise.all([pair.a(scene, p), pair.b(scene, p)])),
      );
      const outcomes = new Map<string, number>();
      for (const [a, b] of answers) {
        const key = `${a.status}/${b.status}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
      const anomalies = await orderAnomalies(target.services.store);
      summary.push(
        `  ${target.name.padEnd(11)} ${pair.name.padEnd(34)} ${[...outcomes].map(([k, n]) => `${k} x${n}`).join(", ")}; anomalies ${anomalies.length}`,
      );
      const serverErrors = answers.flat().filter((a) => a.status >= 500);
      expect(serverErrors, JSON.stringify(serverErrors.slice(0, 3))).toEqual([]);
      expect(anomalies).toEqual([]);
      // One of the two always goes through; where one excludes the other, exactly one does.
      // The dispatch team clears the batch (cancelling what is still open), which gives the sandbox
      // contractors' capacity back for the next pair; the invariants must hold after that too.
      await Promise.all(
        prepared.map((p) =>
          target.call(0, DISPATCHER_CANCEL, { order_id: p.orderId, reason: "cleared" }, scene.dispatcher),
        ),
      );
      expect(await orderAnomalies(target.services.store)).toEqual([]);
      for (const [a, b] of answers) {
        expect([a.status, b.status], pair.name).toContain(200);
        if (pair.exclusive)
          expect(
            [a.status, b.status].filter((x) => x === 200),
            pair.name,
          ).toHaveLength(1);
      }
    }, 180_000);
  }

  it("logged no deadlock, and the database counted none", async () => {
    expect(target.logs()).not.toMatch(/deadlock|40P01/i);
    const after = await target.deadlocks();
    if (deadlocksBefore !== null) {
      summary.push(
        `  ${target.name.padEnd(11)} deadlocks counted by PostgreSQL during the suite: ${(after ?? 0) - deadlocksBefore}`,
      );
      expect(after).toBe(deadlocksBefore);
    }
    await target.close();
  }, 60_000);
});
