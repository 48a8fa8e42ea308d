// An order's timeline of audit records, each verifiable in the browser (verify.ts).

import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { clock, duration, money, STATUS_LABEL, titleCase } from "../format";
import type { OrderStatus } from "../types";
import { type VerifyResult, verifyRecord } from "../verify";

interface AuditRecord {
  seal: string;
  kind: string;
  at: string;
  actor: string;
  record: unknown;
  disclosed: Record<string, unknown>;
}

/** A contractor's name where the view knows it (null: show its id). */
type NameOf = (contractorId: string) => string | null;

const statusWord = (v: unknown) =>
  typeof v === "string" ? (STATUS_LABEL[v as OrderStatus] ?? titleCase(v)) : String(v);

/** What a record says happened, in words: "Status: Accepted → En route", "Offered", "Assigned". */
function recordTitle(r: Pick<AuditRecord, "kind" | "disclosed">): string {
  const d = r.disclosed;
  if (typeof d.to === "string") {
    return typeof d.from === "string"
      ? `Status: ${statusWord(d.from)} → ${statusWord(d.to)}`
      : `Status: ${statusWord(d.to)}`;
  }
  return titleCase(r.kind.replace(/^order\./, ""));
}

/** Who did it, readable: "operator", "caller key key_j842…", "contractor A. Rivera", "system (sla)". */
function actorLabel(actor: string, nameOf: NameOf, disclosedId?: unknown): string {
  const [role, split = ""] = actor.split(/:(.*)/s);
  // A contractor's id is a disclosure of the record (actor_id), where the reader may see it.
  const id = split || (typeof disclosedId === "string" ? disclosedId : "");
  if (role === "contractor" && !id) return "contractor";
  if (role === "operator") return "operator";
  if (role === "key") return `caller key ${id.slice(0, 12)}…`;
  if (role === "contractor") return `contractor ${nameOf(id) ?? id}`;
  if (role === "system") return `system (${id})`;
  return actor;
}

/** The record's facts worth a line, each as a phrase: money in dollars, contractors by name. */
function recordFacts(d: Record<string, unknown>, nameOf: NameOf): string[] {
  const out: string[] = [];
  const who = (v: unknown) => (typeof v === "string" ? (nameOf(v) ?? v) : String(v));
  if (typeof d.to_contractor === "string") out.push(`to ${who(d.to_contractor)}`);
  if (typeof d.from_contractor === "string") out.push(`from ${who(d.from_contractor)}`);
  // The contractor the record names, unless it is who acted (the actor says so already).
  if (typeof d.contractor_id === "string" && d.to_contractor === undefined && d.contractor_id !== d.actor_id)
    out.push(`contractor ${who(d.contractor_id)}`);
  if (typeof d.previous_status === "string" && typeof d.to !== "string")
    out.push(`was ${statusWord(d.previous_status)}`);
  if (typeof d.eta_minutes === "number") out.push(`ETA in ${duration(d.eta_minutes)}`);
  if (typeof d.final_cost_cents === "number") out.push(`final cost ${money(d.final_cost_cents)}`);
  if (typeof d.requested_cents === "number") out.push(`requested ${money(d.requested_cents)}`);
  if (typeof d.reason === "string") out.push(`reason: ${d.reason}`);
  return out;
}

/**
 * An order's audit records, oldest first, read again whenever the order changes: from the records list of
 * the key's role (`path`: dispatcher.audit for the dispatch team, audit.list for an account), each with
 * its Verify.
 */
export function Timeline({
  path,
  orderId,
  version,
  nameOf = () => null,
}: {
  path: string;
  orderId: string;
  version: string;
  nameOf?: NameOf;
}) {
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
      {records !== null && <Candidates records={records} nameOf={nameOf} />}
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
                  <strong>{recordTitle(r)}</strong>
                  <span class="tl-actor" title={r.actor}>
                    {actorLabel(r.actor, nameOf, r.disclosed.actor_id)}
                  </span>
                  {recordFacts(r.disclosed, nameOf).map((f) => (
                    <span key={f} class="tl-field">
                      {f}
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
function Candidates({ records, nameOf }: { records: AuditRecord[]; nameOf: NameOf }) {
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
                {nameOf(c.contractor_id) ? (
                  <span title={c.contractor_id}>{nameOf(c.contractor_id)}</span>
                ) : (
                  <span class="row-id">{c.contractor_id}</span>
                )}
                {c.distance_miles !== null && <span class="cand-distance">{c.distance_miles} mi away</span>}
              </td>
              <td>{c.score.toFixed(3)}</td>
              <td>
                ${(c.price_cents / 100).toFixed(2)}
                {c.within_nte === false && <span class="tl-field"> over NTE</span>}
              </td>
              <td title={c.eta_minutes === null ? undefined : `${c.eta_minutes} min`}>
                {c.eta_minutes === null ? "—" : duration(c.eta_minutes)}
              </td>
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
