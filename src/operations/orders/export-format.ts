// What the accounts-payable exports share (exports.ts): the date range they read, RFC 4180 CSV with a
// guard against formula injection, JSON Lines, the file's name, and reading pages of rows as the reply
// stream asks for them.

import { z } from "zod";
import { validationError } from "../../errors.js";

/** The longest range one export reads. */
const EXPORT_MAX_DAYS = 366;
/** Rows read from the store at a time: the reply holds one page, whatever the export's length. */
export const EXPORT_PAGE_ROWS = 500;

const EXPORT_FORMATS = ["csv", "jsonl"] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The media types (a text type's charset, UTF-8, is added where it is sent: operation-routes.ts). */
export const EXPORT_MEDIA_TYPES = { csv: "text/csv", jsonl: "application/x-ndjson" } as const;

const bound = (name: string, meaning: string) =>
  z
    .union([z.iso.date().max(10), z.iso.datetime().max(64)], {
      error: `${name} must be a date (YYYY-MM-DD) or an ISO 8601 UTC timestamp`,
    })
    .describe(meaning);

/** The query every export takes: the range, the statuses, the format. */
export const exportRangeShape = {
  from: bound("from", "From (inclusive): a date (its start, UTC) or an ISO 8601 UTC timestamp."),
  to: bound(
    "to",
    "To: a date is inclusive (through its end, UTC), a timestamp exclusive. At most 366 days after from.",
  ),
  format: z
    .enum(EXPORT_FORMATS, { error: "format must be csv or jsonl" })
    .default("csv")
    .describe(
      "csv (RFC 4180, a header row, CRLF, UTF-8; the default) or jsonl (JSON Lines, one object a line).",
    ),
};

export interface ExportRange {
  from: string;
  to: string;
  /** For the file's name: the dates as given. */
  label: string;
}

const DAY_MS = 86_400_000;
const isDate = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v);

/** The range as [from, to) in stored timestamps' form; 422 naming the field when it is empty or too long. */
export function exportRange(input: { from: string; to: string }): ExportRange {
  const from = new Date(isDate(input.from) ? `${input.from}T00:00:00.000Z` : input.from);
  const toStart = new Date(isDate(input.to) ? `${input.to}T00:00:00.000Z` : input.to);
  const to = isDate(input.to) ? new Date(toStart.getTime() + DAY_MS) : toStart;
  if (from.getTime() >= to.getTime()) {
    throw validationError([{ field: "from", message: "must be before to" }]);
  }
  if (to.getTime() - from.getTime() > EXPORT_MAX_DAYS * DAY_MS) {
    throw validationError([
      { field: "to", message: `must be at most ${EXPORT_MAX_DAYS} days after from: export a year at a time` },
    ]);
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    label: `${input.from.slice(0, 10)}-to-${input.to.slice(0, 10)}`,
  };
}

/** A comma list of statuses, each one of `allowed`; 422 on `status` naming the ones that are not. */
export function statusList<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(",").map((s) => s.trim());
  const unknown = items.filter((s) => !(allowed as readonly string[]).includes(s));
  if (unknown.length > 0 || items.length === 0) {
    throw validationError([
      {
        field: "status",
        message: `must be one or a comma list of: ${allowed.join(", ")} (not ${unknown.join(", ")})`,
      },
    ]);
  }
  return [...new Set(items)] as T[];
}

export const statusQuery = (allowed: readonly string[]) =>
  z
    .string()
    .min(1)
    .max(300)
    .optional()
    .describe(`Only these statuses: one, or a comma list, of ${allowed.join(", ")}.`);

export function exportFilename(subject: string, range: ExportRange, format: ExportFormat): string {
  return `${subject}-${range.label}.${format}`;
}

type Cell = string | number | boolean | null | undefined;

/** Characters a spreadsheet may read as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field: text that could start a formula gets a leading apostrophe; a field with a comma, a
 * quote, CR or LF is quoted, its quotes doubled (RFC 4180). Numbers are written as they are. */
function csvField(value: Cell): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(csvField).join(",")}\r\n`;
}

export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * The text of an export, a page of rows at a time: `page(after)` reads the rows after the last one read
 * (null: from the start) until a page comes back short; `write` turns a page into text. Nothing is read
 * before the reply asks for the next chunk.
 */
export async function* pagedText<R>(
  header: string,
  page: (after: R | null) => Promise<R[]>,
  write: (rows: R[]) => Promise<string>,
): AsyncGenerator<string> {
  if (header !== "") yield header;
  let after: R | null = null;
  for (;;) {
    const rows = await page(after);
    if (rows.length > 0) yield await write(rows);
    if (rows.length < EXPORT_PAGE_ROWS) return;
    after = rows[rows.length - 1] as R;
  }
}
