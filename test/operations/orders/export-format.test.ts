// The exports' text (export-format.ts): RFC 4180 fields and the formula-injection guard, the date range's
// bounds, and the pages read only as the reply asks for the next chunk.

import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/errors.js";
import {
  csvLine,
  EXPORT_PAGE_ROWS,
  exportRange,
  pagedText,
} from "../../../src/operations/orders/export-format.js";

describe("a CSV line", () => {
  it("quotes a field with a comma, a quote, CR or LF, doubling its quotes, and ends with CRLF", () => {
    expect(csvLine(["plain", 'say "hi"', "a,b", "two\nlines", "cr\r", 12, null, true])).toBe(
      'plain,"say ""hi""","a,b","two\nlines","cr\r",12,,true\r\n',
    );
  });

  it("puts an apostrophe before text that could start a formula, never before a number", () => {
    expect(csvLine(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "a=b", -5])).toBe(
      `'=1+1,'+1,'-1,'@SUM(A1),'\tx,"'\rx",a=b,-5\r\n`,
    );
  });
});

describe("an export's range", () => {
  const fieldOf = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      return (error as ApiError).errors?.map((e) => e.field).join(",");
    }
    return null;
  };

  it("reads a date as a whole UTC day, `to` inclusive, and a timestamp as given, `to` exclusive", () => {
    expect(exportRange({ from: "2026-11-01", to: "2026-11-30" })).toEqual({
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-12-01T00:00:00.000Z",
      label: "2026-11-01-to-2026-11-30",
    });
    expect(exportRange({ from: "2026-11-01T08:00:00Z", to: "2026-11-01T09:00:00Z" })).toMatchObject({
      from: "2026-11-01T08:00:00.000Z",
      to: "2026-11-01T09:00:00.000Z",
    });
  });

  it("refuses a range that ends before it starts (on from) or runs past 366 days (on to)", () => {
    expect(fieldOf(() => exportRange({ from: "2026-11-02", to: "2026-11-01" }))).toBe("from");
    expect(fieldOf(() => exportRange({ from: "2026-11-01T09:00:00Z", to: "2026-11-01T09:00:00Z" }))).toBe(
      "from",
    );
    // 2025-01-01 through 2026-01-01 is 366 days; a day more is too long.
    expect(fieldOf(() => exportRange({ from: "2025-01-01", to: "2026-01-01" }))).toBeNull();
    expect(fieldOf(() => exportRange({ from: "2025-01-01", to: "2026-01-02" }))).toBe("to");
  });
});

describe("an export's pages", () => {
  it("reads the next page only when the reply asks for the next chunk, and stops after a short page", async () => {
    const reads: Array<number | null> = [];
    const rows = (n: number, start: number) => Array.from({ length: n }, (_, i) => start + i);
    const text = pagedText<number>(
      "header\n",
      async (after) => {
        reads.push(after);
        const start = after === null ? 0 : after + 1;
        return rows(start < 2 * EXPORT_PAGE_ROWS ? EXPORT_PAGE_ROWS : 3, start);
      },
      async (page) => `${page.length}\n`,
    );
    const it = text[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe("header\n");
    expect(reads).toEqual([]);
    expect((await it.next()).value).toBe(`${EXPORT_PAGE_ROWS}\n`);
    expect(reads).toEqual([null]);
    expect((await it.next()).value).toBe(`${EXPORT_PAGE_ROWS}\n`);
    expect(reads).toEqual([null, EXPORT_PAGE_ROWS - 1]);
    expect((await it.next()).value).toBe("3\n");
    expect((await it.next()).done).toBe(true);
    expect(reads).toEqual([null, EXPORT_PAGE_ROWS - 1, 2 * EXPORT_PAGE_ROWS - 1]);
  });
});
