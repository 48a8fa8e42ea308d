// What the list operations share: the page size, the time window, and opaque cursors (a position in the
// list's order, encoded so that callers pass it back rather than build it).

import { z } from "zod";
import { validationError } from "../../errors.js";

export const pageLimitSchema = z.coerce
  .number({ error: "limit must be a whole number" })
  .int({ error: "limit must be a whole number" })
  .min(1, { error: "limit must be from 1 to 200" })
  .max(200, { error: "limit must be from 1 to 200" })
  .default(50);

export const sinceSchema = z.iso
  .datetime({ error: "since must be an ISO 8601 UTC timestamp" })
  .max(64, { error: "since must be at most 64 characters" })
  .optional()
  .describe("From (inclusive).");

export const untilSchema = z.iso
  .datetime({ error: "until must be an ISO 8601 UTC timestamp" })
  .max(64, { error: "until must be at most 64 characters" })
  .optional()
  .describe("Until (exclusive).");

export const cursorSchema = z.string().max(512).optional().describe("next_cursor of the previous page.");

function encodeCursor(kind: string, position: string): string {
  return Buffer.from(`${kind}:${position}`).toString("base64url");
}

/** The position a cursor of `kind` holds, if it matches `pattern`; a 422 on `cursor` otherwise. */
export function decodeCursor(cursor: string, kind: string, pattern: RegExp): RegExpExecArray {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = text.startsWith(`${kind}:`) ? pattern.exec(text.slice(kind.length + 1)) : null;
  if (!match) throw validationError([{ field: "cursor", message: "is not a cursor this API returned" }]);
  return match;
}

/** One page of `rows` (fetched with limit + 1), and the cursor of the next page, if there is one. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  kind: string,
  position: (last: T) => string,
): { page: T[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, next_cursor: rows.length > limit && last ? encodeCursor(kind, position(last)) : null };
}

// Orders are listed newest first: a position is the last order's created_at (fixed-width ISO 8601) and id.
const ORDER_POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(ord_[0-9A-Za-z]{1,40})$/;

export function orderPosition(
  cursor: string | undefined,
  kind: string,
): { createdAt: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const match = decodeCursor(cursor, kind, ORDER_POSITION);
  return { createdAt: match[1] as string, id: match[2] as string };
}

export const orderPositionOf = (order: { created_at: string; id: string }) =>
  `${order.created_at}|${order.id}`;
