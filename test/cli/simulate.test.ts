// The simulator: a small run on a fresh store plays every role through the operations, with virtual
// timestamps; the same seed replays the same outcome; a store with other accounts' live orders is refused.

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openRecord } from "../../src/audit/redaction.js";
import { formatReport, parseSimulateArgs } from "../../src/cli/simulate.js";
import { loadConfig } from "../../src/config.js";
import type { ChecklistTemplate } from "../../src/domain/orders/checklist.js";
import { ApiError } from "../../src/errors.js";
import { createTemplate, templateInput } from "../../src/operations/orders/checklist-templates.js";
import {
  runSimulation,
  type SimulationOptions,
  SimulationRefused,
  type SimulationReport,
} from "../../src/sim/simulation.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fd-sim-"));
  dirs.push(dir);
  return dir;
}

// A fixed end well before the wall clock: a timestamp taken from the wall clock would fall after it.
const END = new Date("2025-06-02T00:00:00.000Z");
const START = new Date(END.getTime() - 2 * 86_400_000);

function options(overrides: Partial<SimulationOptions> = {}): SimulationOptions {
  return {
    days: 2,
    ordersPerDay: 20,
    seed: 1,
    account: "simulation",
    force: false,
    end: END,
    concurrency: 128,
    ...overrides,
  };
}

async function simulate(dir: string, overrides: Partial<SimulationOptions> = {}): Promise<SimulationReport> {
  const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
  try {
    await store.migrate();
    return await runSimulation(
      store,
      loadConfig({ DATA_DIR: dir, VALIDATE_RESPONSES: "true" }),
      options(overrides),
    );
  } finally {
    await store.close();
  }
}

function database(dir: string): Database.Database {
  return new Database(join(dir, "field-dispatch.sqlite"), { readonly: true });
}

async function cli(
  dir: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(
      process.execPath,
      ["--import", "tsx", "src/cli/index.ts", "simulate", ...args],
      { cwd: ROOT, env: { ...process.env, ENV_FILE: "", DATA_DIR: dir } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("simulate", () => {
  const dir = freshDir();
  let first: SimulationReport;

  it("plays callers, contractors and dispatchers through the operations to several outcomes", async () => {
    first = await simulate(dir);
    const c = first.counters;
    expect(first.pool.imported).toBeGreaterThan(1000); // the empty live pool got the generated one
    expect(c.ordersCreated).toBe(40);
    expect(c.ordersStuck).toBe(0);
    expect(first.operations.refused).toEqual({});
    // Terminal statuses and the ones in between: the last hours' orders are still under way.
    expect(first.statuses.invoiced).toBeGreaterThan(0);
    expect(first.statuses.cancelled).toBeGreaterThan(0);
    expect(Object.keys(first.statuses).length).toBeGreaterThanOrEqual(4);
    expect(Object.values(first.statuses).reduce((a, b) => a + b, 0)).toBe(40);
    expect(c.offersAccepted).toBeGreaterThan(0);
    expect(c.offersDeclined).toBeGreaterThan(0);
    expect(c.offersExpired).toBe(first.sweeps);
    expect(c.offersExpired).toBeGreaterThan(0);
    expect(c.overridesAssigned + c.overridesAfterFailure + c.overridesReassigned).toBeGreaterThan(0);
    expect(c.nteRequests).toBeGreaterThan(0);
    expect(c.nteApproved + c.nteRejected).toBe(c.nteRequests);
    expect(c.completedOverNte + c.completedWithinNte).toBeGreaterThan(0);

    const db = database(dir);
    try {
      const orders = db
        .prepare(
          "select o.* from orders o join accounts a on a.id = o.account_id where a.name = 'simulation' and o.livemode = 1",
        )
        .all() as Array<Record<string, string | number | null>>;
      expect(orders).toHaveLength(40);
      const received = orders.map((o) => Date.parse(o.received_at as string));
      // Timestamps come from the virtual clock: inside the two simulated days, spread across both.
      expect(Math.min(...received)).toBeGreaterThanOrEqual(START.getTime());
      expect(Math.max(...received)).toBeLessThan(END.getTime());
      expect(Math.max(...received) - Math.min(...received)).toBeGreaterThan(86_400_000);
      for (const o of orders) {
        expect(o.created_at).toBe(o.received_at);
        for (const field of ["accepted_at", "completed_at", "invoiced_at", "updated_at"]) {
          const at = o[field];
          if (at === null) continue;
          expect(Date.parse(at as string), `${o.id} ${field}`).toBeGreaterThanOrEqual(
            Date.parse(o.received_at as string),
          );
          expect(Date.parse(at as string), `${o.id} ${field}`).toBeLessThan(END.getTime());
        }
      }
      expect(orders.filter((o) => o.status === "invoiced").every((o) => o.completed_at !== null)).toBe(true);

      // Every decision on these orders was taken by a key of the right kind, or by the dispatch sweep.
      const keys = new Map(
        (
          db.prepare("select id, kind, contractor_id from api_keys").all() as Array<{
            id: string;
            kind: string;
            contractor_id: string | null;
          }>
        ).map((k) => [k.id, k]),
      );
      const contractorsWithKeys = new Set([...keys.values()].map((k) => k.contractor_id));
      const records = db
        .prepare(
          "select r.kind, r.actor, r.record, r.disclosures, r.created_at from audit_records r join orders o on o.id = r.order_id join accounts a on a.id = o.account_id where a.name = 'simulation'",
        )
        .all() as Array<{
        kind: string;
        actor: string;
        record: string;
        disclosures: string | null;
        created_at: string;
      }>;
      const actorKind = (actor: string): string => {
        const [type, id = ""] = actor.split(/:(.*)/s);
        if (type === "key") return `caller:${keys.get(id)?.kind}`;
        if (type === "operator") return `dispatcher:${keys.get(id)?.kind}`;
        if (type === "contractor") return contractorsWithKeys.has(id) ? "contractor:own-key" : "contractor:?";
        return actor;
      };
      const byKind = new Map<string, Set<string>>();
      for (const r of records) {
        const set = byKind.get(r.kind) ?? new Set();
        set.add(actorKind(openRecord(r).actor));
        byKind.set(r.kind, set);
        expect(Date.parse(r.created_at)).toBeLessThan(END.getTime());
      }
      const actors = (kind: string) => [...(byKind.get(kind) ?? [])].sort();
      expect(actors("order.created")).toEqual(["caller:account"]);
      expect(actors("order.accepted")).toEqual(["contractor:own-key"]);
      expect(actors("order.offer_declined")).toEqual(["contractor:own-key"]);
      expect(actors("order.status_changed")).toEqual(["contractor:own-key"]);
      expect(actors("order.nte_requested")).toEqual(["contractor:own-key"]);
      expect(actors("order.nte_decided")).toEqual(["caller:account"]);
      expect(actors("order.invoiced")).toEqual(["contractor:own-key"]);
      expect(actors("order.assigned")).toEqual(["dispatcher:dispatcher"]);
      expect(actors("order.offer_expired")).toEqual(["system:dispatch"]);
      // The service-level watch speaks for the clocks (a simulated contractor may arrive late).
      for (const kind of ["order.sla_at_risk", "order.sla_breached"]) {
        if (byKind.has(kind)) expect(actors(kind)).toEqual(["system:sla"]);
      }
      for (const set of byKind.values()) {
        for (const actor of set)
          expect(actor).toMatch(
            /^(caller:account|contractor:own-key|dispatcher:dispatcher|system:dispatch|system:sla)$/,
          );
      }

      // The simulator's keys acted only during the run.
      const simKeys = db
        .prepare(
          "select k.revoked_at from api_keys k join accounts a on a.id = k.account_id where a.name = 'simulation'",
        )
        .all() as Array<{ revoked_at: string | null }>;
      expect(simKeys.length).toBe(first.keysIssued);
      expect(simKeys.every((k) => k.revoked_at !== null)).toBe(true);
    } finally {
      db.close();
    }

    const text = formatReport(first, "http://127.0.0.1:8080/api/dispatch/analytics/evals");
    expect(text).toContain("orders      40 created");
    expect(text).toContain(`invoiced ${first.statuses.invoiced}`);
    expect(text).toContain("/api/dispatch/analytics/evals");
  }, 120_000);

  it("replays the same outcome from the same seed, and another from another seed", async () => {
    const again = await simulate(freshDir());
    expect(again.statuses).toEqual(first.statuses);
    expect(again.counters).toEqual(first.counters);
    expect(again.operations.byName).toEqual(first.operations.byName);
    // One step at a time in virtual-time order gives the same outcome as the concurrent default.
    const serial = await simulate(freshDir(), { concurrency: 1 });
    expect(serial.counters).toEqual(first.counters);
    const other = await simulate(freshDir(), { seed: 2 });
    expect(other.counters).not.toEqual(first.counters);
  }, 120_000);

  it("leaves proof on a share of jobs: a photo and a signature, and the checklist answered when there is one", async () => {
    const dir = freshDir();
    // A live service template for plumbing, as the dispatch team would create it: a required photo.
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    let template: ChecklistTemplate | ApiError;
    try {
      await store.migrate();
      const input = templateInput.parse({
        trade: "plumbing",
        name: "Leak repair",
        items: [
          { kind: "yes_no", label: "Leak stopped", required: true },
          { kind: "number", label: "Pressure", unit: "psi", min: 20, max: 120 },
          { kind: "photo", label: "Repaired joint", required: true },
        ],
      });
      const owner = { livemode: true, accountId: null, actor: "operator:test" };
      template = await store.write((tx) => createTemplate(store, tx, owner, input, START.toISOString()));
    } finally {
      await store.close();
    }
    if (template instanceof ApiError) throw template;
    const report = await simulate(dir, { days: 1, ordersPerDay: 100 });
    const c = report.counters;
    expect(c.ordersStuck).toBe(0);
    expect(report.operations.refused).toEqual({});
    expect(c.proofSignatures).toBeGreaterThan(0);
    expect(c.checklistsAnswered).toBeGreaterThan(0);
    // A photo for every job leaving proof, and for every plumbing job (its checklist asks for one).
    expect(c.proofPhotos).toBeGreaterThanOrEqual(c.proofSignatures);
    expect(c.proofPhotos).toBeGreaterThanOrEqual(c.checklistsAnswered);

    const db = database(dir);
    try {
      const completed = db
        .prepare(
          "select o.id, o.trade from orders o where o.livemode = 1 and o.status in ('completed', 'invoiced')",
        )
        .all() as Array<{ id: string; trade: string }>;
      const files = db.prepare("select order_id, kind, signer_name from attachments").all() as Array<{
        order_id: string;
        kind: string;
        signer_name: string | null;
      }>;
      const kindsOf = (id: string) => files.filter((f) => f.order_id === id).map((f) => f.kind);
      const signed = completed.filter((o) => kindsOf(o.id).includes("signature"));
      expect(signed.length).toBe(c.proofSignatures);
      // About one job in ten (MIX.proofShare), not all and not none.
      expect(signed.length).toBeLessThan(completed.length);
      for (const o of signed) expect(kindsOf(o.id)).toContain("photo");
      expect(files.filter((f) => f.kind === "signature").every((f) => f.signer_name !== null)).toBe(true);
      // Every completed plumbing job's checklist: fixed from the template, every item answered, the
      // photo item with a photo of its own job.
      const plumbing = completed.filter((o) => o.trade === "plumbing");
      expect(plumbing.length).toBeGreaterThan(0);
      expect(plumbing.length).toBe(c.checklistsAnswered);
      const answers = db.prepare("select order_id, item_id, value from checklist_answers").all() as Array<{
        order_id: string;
        item_id: string;
        value: string;
      }>;
      const photoItem = template.items[2]?.item_id;
      for (const o of plumbing) {
        const mine = answers.filter((a) => a.order_id === o.id);
        expect(mine).toHaveLength(3);
        const photo = JSON.parse(mine.find((a) => a.item_id === photoItem)?.value ?? "null");
        expect(files.some((f) => f.order_id === o.id && f.kind === "photo")).toBe(true);
        const owner = db.prepare("select order_id from attachments where id = ?").get(photo) as
          | { order_id: string }
          | undefined;
        expect(owner?.order_id).toBe(o.id);
      }
      // No other trade has a checklist: none is fixed for their jobs.
      const fixedTrades = db
        .prepare("select distinct o.trade from order_checklists c join orders o on o.id = c.order_id")
        .all();
      expect(fixedTrades).toEqual([{ trade: "plumbing" }]);
    } finally {
      db.close();
    }
    expect(formatReport(report, "http://x/evals")).toMatch(
      new RegExp(
        `proof +${c.proofPhotos} jobs with a photo, ${c.proofSignatures} with the site contact's signature; ${c.checklistsAnswered} checklists answered`,
      ),
    );
  }, 120_000);

  it("refuses a store where other accounts have live orders, unless --force", async () => {
    const shared = freshDir();
    // Another account's live orders (made through the operations, by the simulator itself).
    await simulate(shared, { account: "acme", days: 1, ordersPerDay: 3 });
    await expect(simulate(shared, { days: 1, ordersPerDay: 3 })).rejects.toThrow(SimulationRefused);

    const refused = await cli(shared, "--days", "1", "--orders-per-day", "3", "--seed", "5");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/other accounts have live orders in this store \(acme\)/);
    expect(refused.stderr).toMatch(/--force/);
    const db = database(shared);
    const ours = db
      .prepare(
        "select count(*) as n from orders o join accounts a on a.id = o.account_id where a.name = 'simulation'",
      )
      .get() as { n: number };
    db.close();
    expect(ours.n).toBe(0);

    const forced = await cli(shared, "--days", "1", "--orders-per-day", "3", "--seed", "5", "--force");
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^orders {6}3 created/m);
    expect(forced.stdout).toContain("/api/dispatch/analytics/evals?period=rolling_7d");
  }, 120_000);

  it("checks its arguments", async () => {
    const now = new Date("2025-06-01T00:00:00Z");
    expect(parseSimulateArgs(["--days", "0"], now)).toMatchObject({ ok: false });
    expect(parseSimulateArgs(["--orders-per-day", "x"], now)).toMatchObject({ ok: false });
    expect(parseSimulateArgs(["--start", "2025-05-31T00:00:00Z", "--days", "2"], now)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/after now/),
    });
    const parsed = parseSimulateArgs(["--start", "2025-05-01T00:00:00Z", "--days", "7", "--seed", "9"], now);
    expect(parsed).toMatchObject({
      ok: true,
      options: { days: 7, seed: 9, ordersPerDay: 500, account: "simulation" },
    });
    expect(parsed.ok && parsed.options.end.toISOString()).toBe("2025-05-08T00:00:00.000Z");
    expect((await cli(freshDir(), "--days", "-1")).code).toBe(2);
  }, 60_000);
});
