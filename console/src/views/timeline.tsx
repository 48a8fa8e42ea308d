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
    <>
      {records !== null && <Candidates records={records} />}
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
    </>
  );
}

interface Candidate {
  contractor_id: string;
  score: number;
  price_cents: number;
  eta_minutes: number | null;
  distance_miles: number | null;
  within_nte: boolean | null;
  components: Record<string, number>;
}

/**
 * The ranked candidates of the order's latest match, as its record disclosed them to this key: only the
 * dispatch team's records carry them (an account's show its own job and the chosen contractor's handle).
 */
function Candidates({ records }: { records: AuditRecord[] }) {
  const latest = [...records]
    .reverse()
    .find((r) => Array.isArray(r.disclosed.candidates) && (r.disclosed.candidates as unknown[]).length > 0);
  if (!latest) return null;
  const list = latest.disclosed.candidates as Candidate[];
  return (
    <section class="panel" aria-label="Ranked candidates">
      <h3>Ranked candidates</h3>
      <p class="muted">
        As the {latest.kind.replace(/^order\./, "").replace(/_/g, " ")} record of {clock(latest.at)} ranked
        them, best first.
      </p>
      <table class="candidates">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Contractor</th>
            <th scope="col">Score</th>
            <th scope="col">Price</th>
            <th scope="col">ETA</th>
          </tr>
        </thead>
        <tbody>
          {list.map((c, i) => (
            <tr
              key={c.contractor_id}
              data-contractor-id={c.contractor_id}
              title={Object.entries(c.components)
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")}
            >
              <td>{i + 1}</td>
              <td>
                <span class="row-id">{c.contractor_id}</span>
                {c.distance_miles !== null && <span class="cand-distance">{c.distance_miles} mi away</span>}
              </td>
              <td>{c.score.toFixed(3)}</td>
              <td>
                ${(c.price_cents / 100).toFixed(2)}
                {c.within_nte === false && <span class="tl-field"> over NTE</span>}
              </td>
              <td>{c.eta_minutes === null ? "—" : `${c.eta_minutes} min`}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
