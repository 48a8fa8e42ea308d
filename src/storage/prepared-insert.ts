// Prepared multi-row INSERTs for the write paths that run per order: the store's plain inserts and the
// audit log's records, leaves and tree nodes.

import { CompiledQuery, type Insertable, type Kysely } from "kysely";
import type { Dialect } from "./dialect.js";
import type { Database } from "./schema.js";

const TEXTS_KEPT = 64;

/**
 * A hot-path INSERT compiled once by Kysely (so the SQL is the dialect's own), then run with each row's
 * values in the same column order: saves building and compiling the query for every order and quote.
 * A transaction's rows go out as multi-row INSERTs: on PostgreSQL one round trip per chunk instead of one
 * per row, on SQLite one statement execution instead of one per row.
 */
export class PreparedInsert<T extends keyof Database> {
  private sql: string | null = null;
  private head = "";
  private columns: Array<keyof Database[T] & string> = [];
  /** Rows per multi-row statement: PostgreSQL allows 65,535 parameters per statement. */
  private chunk = 1;
  /** The SQL text of each multi-row size built so far: a handful on SQLite (powers of two); on
   * PostgreSQL, whose chunks take any size, the first TEXTS_KEPT sizes met. */
  private readonly texts = new Map<number, string>();

  constructor(
    private readonly table: T,
    private readonly dialect: Dialect,
  ) {}

  private compile(db: Kysely<Database>, row: Insertable<Database[T]> & object): void {
    if (this.sql !== null) return;
    this.columns = Object.keys(row) as Array<keyof Database[T] & string>;
    // biome-ignore lint/suspicious/noExplicitAny: Kysely's insert typing cannot follow a generic table.
    const single = (db.insertInto(this.table) as any).values(row).compile().sql as string;
    this.sql = single;
    this.head = single.slice(0, single.lastIndexOf(" values ") + " values ".length);
    // PostgreSQL allows 65,535 parameters per statement, SQLite 32,766; SQLite chunks stay small so that
    // its statement cache holds every size.
    this.chunk =
      this.dialect === "sqlite"
        ? Math.min(256, Math.floor(30_000 / this.columns.length))
        : Math.max(1, Math.floor(60_000 / this.columns.length));
  }

  /** The row's values in the statement's column order, appended to `into`. */
  private values(row: Insertable<Database[T]> & object, into: unknown[]): void {
    const record = row as Record<string, unknown>;
    const columns = this.columns;
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i] as string;
      const v = record[c];
      if (v === undefined && !(c in record)) throw new Error(`row for ${this.table} lacks column ${c}`);
      into.push(v);
    }
    // No column missing and as many as the statement's: none it would leave out.
    let width = 0;
    for (const _ in record) width++;
    if (width !== columns.length) throw new Error(`row for ${this.table} has extra columns`);
  }

  /** The SQL text inserting `size` rows, built once per size. */
  private text(size: number): string {
    let text = this.texts.get(size);
    if (text === undefined) {
      const width = this.columns.length;
      const tuples: string[] = [];
      for (let r = 0; r < size; r++) {
        const marks = this.columns.map((_, c) => (this.dialect === "sqlite" ? "?" : `$${r * width + c + 1}`));
        tuples.push(`(${marks.join(", ")})`);
      }
      text = this.head + tuples.join(", ");
      if (this.texts.size < TEXTS_KEPT) this.texts.set(size, text);
    }
    return text;
  }

  /** The statements that insert `rows`: one per row on SQLite, one per chunk of rows on PostgreSQL. */
  private queries(db: Kysely<Database>, rows: Array<Insertable<Database[T]> & object>): CompiledQuery[] {
    const first = rows[0];
    if (first === undefined) return [];
    this.compile(db, first);
    const out: CompiledQuery[] = [];
    let at = 0;
    while (at < rows.length) {
      // SQLite caches statements by their text: chunks of power-of-two sizes keep the distinct texts
      // (and so the statements prepared) to a handful per table.
      let size = Math.min(this.chunk, rows.length - at);
      if (this.dialect === "sqlite") size = 2 ** Math.floor(Math.log2(size));
      out.push(this.multiRow(rows.slice(at, at + size)));
      at += size;
    }
    return out;
  }

  private multiRow(part: Array<Insertable<Database[T]> & object>): CompiledQuery {
    const params: unknown[] = [];
    for (const row of part) this.values(row, params);
    return CompiledQuery.raw(part.length === 1 ? (this.sql as string) : this.text(part.length), params);
  }

  /** Runs the statements that insert `rows` in `db` (a transaction, usually). */
  async run(db: Kysely<Database>, rows: Array<Insertable<Database[T]> & object>): Promise<void> {
    for (const q of this.queries(db, rows)) await db.executeQuery(q);
  }
}
