// The time contractors' jobs hold (domain/commitments.ts) as the write transaction sees it: the blocks of
// the capacity ledger's rows (migration 0022), with those taken and given back earlier in the same
// transaction. The writer fits a job against it after taking the contractor's unit, so the check that
// the time is still free runs inside the order's transaction:
//   - on a shared store (PostgreSQL) the contractor's rows are read in the transaction, after its row is
//     locked (declared by the write and locked first, kysely-store.ts lockDeclared, or by the unit's
//     conditional update), so another process's commit is seen;
//   - on the embedded store (SQLite) this process is the only writer: the committed rows are kept in
//     memory (loaded once, at the first transaction's start, before it writes anything) and the
//     transaction's own steps applied to them once it has committed, so the check costs no query.

import type { Kysely, Transaction } from "kysely";
import type { Commitment } from "../domain/commitments.js";
import type { CapacityHoldsTable, Database } from "./schema.js";

type Db = Kysely<Database> | Transaction<Database>;

/** A ledger row's block, or null when it holds none. */
export function commitmentOf(
  row: Pick<CapacityHoldsTable, "order_id" | "starts_at" | "ends_at" | "lat" | "lon">,
): Commitment | null {
  if (!row.starts_at || !row.ends_at) return null;
  const lat = row.lat === null || row.lat === undefined ? null : Number(row.lat);
  const lon = row.lon === null || row.lon === undefined ? null : Number(row.lon);
  return {
    orderId: row.order_id,
    start: Date.parse(row.starts_at),
    end: Date.parse(row.ends_at),
    point: lat === null || lon === null ? null : { lat, lon },
  };
}

/** The ledger row's columns of a block (all of them, null without one: prepared inserts take every row
 * with the same columns). */
export function blockColumns(
  c: Commitment | null,
): Required<Pick<CapacityHoldsTable, "starts_at" | "ends_at" | "lat" | "lon">> {
  return {
    starts_at: c ? new Date(c.start).toISOString() : null,
    ends_at: c ? new Date(c.end).toISOString() : null,
    lat: c?.point?.lat ?? null,
    lon: c?.point?.lon ?? null,
  };
}

const BLOCK_COLUMNS = ["order_id", "contractor_id", "starts_at", "ends_at", "lat", "lon"] as const;

/** Every block held, by contractor; of the contractors `ids` only, when given. */
export async function loadCommitments(db: Db, ids?: readonly string[]): Promise<Array<[string, Commitment]>> {
  if (ids !== undefined && ids.length === 0) return [];
  let query = db.selectFrom("capacity_holds").select(BLOCK_COLUMNS).where("starts_at", "is not", null);
  if (ids !== undefined) query = query.where("contractor_id", "in", ids);
  const rows = await query.execute();
  const out: Array<[string, Commitment]> = [];
  for (const row of rows) {
    const c = commitmentOf(row);
    if (c) out.push([row.contractor_id, c]);
  }
  return out;
}

/** The embedded store's committed blocks, by contractor (see the module's comment). */
export class CommittedTime {
  private byContractor: Map<string, Map<string, Commitment>> | null = null;

  get loaded(): boolean {
    return this.byContractor !== null;
  }

  /** Loads the committed blocks (in a transaction that has written nothing yet). */
  async load(db: Db): Promise<void> {
    const map = new Map<string, Map<string, Commitment>>();
    for (const [id, c] of await loadCommitments(db)) {
      let held = map.get(id);
      if (!held) {
        held = new Map();
        map.set(id, held);
      }
      held.set(c.orderId, c);
    }
    this.byContractor = map;
  }

  heldBy(contractorId: string): Iterable<Commitment> {
    return this.byContractor?.get(contractorId)?.values() ?? [];
  }

  /** Applies a committed transaction's steps. */
  apply(steps: TransactionTime): void {
    const map = this.byContractor;
    if (map === null) return;
    for (const [id, orders] of steps.released) {
      const held = map.get(id);
      if (!held) continue;
      for (const orderId of orders) held.delete(orderId);
      if (held.size === 0) map.delete(id);
    }
    for (const [id, taken] of steps.taken) {
      let held = map.get(id);
      if (!held) {
        held = new Map();
        map.set(id, held);
      }
      for (const [orderId, c] of taken) held.set(orderId, c);
    }
  }
}

/** One transaction's view of the time held: the committed blocks (read from the store, or the embedded
 * store's memory) with the blocks this transaction took and gave back. */
export class TransactionTime {
  readonly taken = new Map<string, Map<string, Commitment>>();
  readonly released = new Map<string, Set<string>>();

  constructor(
    private readonly trx: Db,
    /** The embedded store's committed blocks; null: read them from the store. */
    private readonly committed: CommittedTime | null,
  ) {}

  /** The blocks the contractor holds now, in this transaction, in start order. */
  async heldBy(contractorId: string): Promise<Commitment[]> {
    const byOrder = new Map<string, Commitment>();
    if (this.committed !== null) {
      for (const c of this.committed.heldBy(contractorId)) byOrder.set(c.orderId, c);
    } else {
      // Served by capacity_holds_contractor_idx, which only PostgreSQL has (migration 0024): the embedded
      // store always has its committed time.
      const rows = await this.trx
        .selectFrom("capacity_holds")
        .select(BLOCK_COLUMNS)
        .where("contractor_id", "=", contractorId)
        .where("starts_at", "is not", null)
        .execute();
      for (const row of rows) {
        const c = commitmentOf(row);
        if (c) byOrder.set(c.orderId, c);
      }
    }
    for (const orderId of this.released.get(contractorId) ?? []) byOrder.delete(orderId);
    for (const [orderId, c] of this.taken.get(contractorId) ?? []) byOrder.set(orderId, c);
    return [...byOrder.values()].sort((a, b) => a.start - b.start);
  }

  /** The order took a block of the contractor's time in this transaction. */
  took(contractorId: string, c: Commitment): void {
    this.released.get(contractorId)?.delete(c.orderId);
    let taken = this.taken.get(contractorId);
    if (!taken) {
      taken = new Map();
      this.taken.set(contractorId, taken);
    }
    taken.set(c.orderId, c);
  }

  /** The order gave back what it held of the contractor's time in this transaction. */
  gaveBack(contractorId: string, orderId: string): void {
    this.taken.get(contractorId)?.delete(orderId);
    let released = this.released.get(contractorId);
    if (!released) {
      released = new Set();
      this.released.set(contractorId, released);
    }
    released.add(orderId);
  }

  /** Undoes `took` (the change was not written after all). */
  untook(contractorId: string, orderId: string): void {
    this.taken.get(contractorId)?.delete(orderId);
  }

  /** Undoes `gaveBack`. */
  ungaveBack(contractorId: string, orderId: string): void {
    this.released.get(contractorId)?.delete(orderId);
  }
}
