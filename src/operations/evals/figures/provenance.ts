// Per-field provenance: where each figure comes from, its formula, its sample, when it was computed, and
// a note where it is easy to misread. Each theme's file states its own figures' provenance; the report
// checks the entries against its schema.

export const ORDERS_SOURCE = "orders table, live orders received in the window";

/** The maker of one computation's entries (each stamped `computedAt`). */
export function entriesAt(computedAt: string) {
  return (source: string, formula: string, sampleSize: number | null, note?: string) => ({
    source,
    formula,
    sample_size: sampleSize,
    computed_at: computedAt,
    ...(note === undefined ? {} : { note }),
  });
}

export type Entry = ReturnType<typeof entriesAt>;
export type Provenance = Record<string, ReturnType<Entry>>;
