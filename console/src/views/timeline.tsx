// An order's timeline of audit records, each verifiable in the browser (verify.ts).

import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { clock } from "../format";
import { type VerifyResult, verifyRecord } from "../verify";

interface AuditRecord {
  seal: string;
  kind: string;
  at: string;
  actor: string;
  record: unknown;
  disclosed: Record<string, unknown>;
}

/** The fields of a record worth a line on the timeline, when it has them. */
const TIMELINE_FIELDS = [
  "reason",
  "to_contractor",
  "from_contractor",
  "contractor_id",
  "previous_status",
  "eta_minutes",
  "final_cost_cents",
  "requested_cents",
];

/**
 * An order's audit records, oldest first, read again whenever the order changes: from the records list of
 * the key's role (`path`: dispatcher.audit for the dispatch team, audit.list for an account), each with
 * its Verify.
 */
export function Timeline({ path, orderId, version }: { path: string; orderId: string; version: string }) {
  const [records, setRecords] = useState<AuditRecord[] | null>(null);
  useEffect(() => {
    let stale = false;
    get<{ records: AuditRecord[] }>(path, { order_id: orderId, limit: 200 })
      .then((page) => {
        if (!stale) setRecords(page.records);
      })
      .catch(() => {
        if (!stale) setRecords([]);
      });
    return () => {
      stale = true;
    };
  }, [path, orderId, version]);
  return (
    <section class="panel" aria-label="Timeline">
      <h3>Timeline</h3>
      {records === null ? (
        <p class="muted">Loading…</p>
      ) : records.length === 0 ? (
        <p class="muted">No records.</p>
      ) : (
        <ol class="timeline">
          {records.map((r) => (
            <li key={r.seal} class="tl-item" data-kind={r.kind}>
              <span class="tl-when">{clock(r.at)}</span>
              <span class="tl-what">
                <strong>{r.kind.replace(/^order\./, "").replace(/_/g, " ")}</strong>
                <span class="tl-actor">{r.actor}</span>
                {TIMELINE_FIELDS.filter((f) => {
                  const v = r.disclosed[f];
                  return typeof v === "string" || typeof v === "number";
                }).map((f) => (
                  <span key={f} class="tl-field">
                    {f.replace(/_/g, " ")}: {String(r.disclosed[f])}
                  </span>
                ))}
                <span class="row-id" title="The record's seal: GET /api/attest/verify/{seal} proves it">
                  {r.seal.slice(0, 24)}…
                </span>
                <VerifyButton record={r} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** Verify: the record checked in this browser against the signed log (verify.ts). */
function VerifyButton({ record }: { record: AuditRecord }) {
  const [result, setResult] = useState<VerifyResult | "checking" | null>(null);
  const check = async () => {
    setResult("checking");
    try {
      setResult(await verifyRecord(record.seal, record.record));
    } catch (err) {
      setResult({ ok: false, reason: err instanceof Error ? err.message : "the check failed" });
    }
  };
  return (
    <span class="verify">
      <button
        type="button"
        class="btn btn-quiet btn-small"
        disabled={result === "checking"}
        onClick={() => void check()}
      >
        Verify
      </button>
      {result !== null && result !== "checking" && (
        <span class={result.ok ? "verified" : "mismatch"} role="status">
          {result.ok ? "verified" : `mismatch: ${result.reason}`}
        </span>
      )}
    </span>
  );
}
