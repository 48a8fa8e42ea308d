// An order's timeline of audit records, each verifiable in the browser (verify.ts).

import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { duration, minute, money, STATUS_LABEL, titleCase, zonedClock, zonedSpan } from "../format";
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

/** What the view knows to name who acted and where: contractors' names, the order's account's name (the
 * dispatch team's view; an account's own view has none), and the job's zone (its times are read in it). */
interface Reading {
  nameOf: NameOf;
  accountName: string | null;
  zone: string | null;
  at: number;
}

const statusWord = (v: unknown) =>
  typeof v === "string" ? (STATUS_LABEL[v as OrderStatus] ?? titleCase(v)) : String(v);

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** A contractor the record names: by name where the view knows it, else "contractor <id or handle>". */
function contractorWords(id: string, nameOf: NameOf): string {
  return nameOf(id) ?? `contractor ${id}`;
}

/** The contractor a record names, as the reader was shown it: its id (the dispatch team, itself), else
 * the account's handle of it. */
function named(d: Record<string, unknown>, field: string): string | null {
  return str(d[field]) ?? str(d[`${field}_ref`]);
}

const KIND_TITLE: Record<string, string> = {
  "order.created": "Order placed",
  "order.unmatched": "No contractor available: waits for a dispatcher",
  "order.needs_dispatcher": "Offers ran out: waits for a dispatcher",
  "order.offer_declined": "Offer declined",
  "order.offer_expired": "Offer expired",
  "order.sla_at_risk": "Service level at risk",
  "order.sla_breached": "Service level breached",
};

/** What a record says happened, in words: "Offered to Bay Plumbing Co", "Status: Accepted → En route",
 * "Assigned to Bay Plumbing Co", "Accepted". */
function recordTitle(r: Pick<AuditRecord, "kind" | "disclosed">, nameOf: NameOf): string {
  const d = r.disclosed;
  if (typeof d.to === "string") {
    return typeof d.from === "string"
      ? `Status: ${statusWord(d.from)} → ${statusWord(d.to)}`
      : `Status: ${statusWord(d.to)}`;
  }
  // The contractor the job went to: the match's choice, a re-offer's next contractor, a dispatcher's pick.
  const offeredTo =
    r.kind === "order.matched"
      ? named(d, "chosen")
      : r.kind === "order.offered"
        ? named(d, "contractor_id")
        : null;
  if (offeredTo) return `Offered to ${contractorWords(offeredTo, nameOf)}`;
  const assignedTo = r.kind === "order.assigned" ? named(d, "to_contractor") : null;
  if (assignedTo) return `Assigned to ${contractorWords(assignedTo, nameOf)}`;
  return KIND_TITLE[r.kind] ?? titleCase(r.kind.replace(/^order\./, ""));
}

/** Who did it, as a role and a name: "Account acme-properties (key key_j842…)", "Contractor Bay Plumbing
 * Co", "Dispatch team", "System (dispatch)". */
function actorLabel(actor: string, reading: Reading, disclosedId?: unknown): string {
  const [role, split = ""] = actor.split(/:(.*)/s);
  // A contractor's id is a disclosure of the record (actor_id), where the reader may see it.
  const id = split || (typeof disclosedId === "string" ? disclosedId : "");
  if (role === "contractor") return id ? `Contractor ${reading.nameOf(id) ?? id}` : "Contractor";
  if (role === "operator") return "Dispatch team";
  // An account's key: the order's account (only its own keys act on its orders).
  if (role === "key") {
    const key = `key ${id.slice(0, 12)}…`;
    return reading.accountName ? `Account ${reading.accountName} (${key})` : `Account (${key})`;
  }
  if (role === "system") return `System (${id})`;
  return actor;
}

/** The record's facts worth a line, each as a phrase: money in dollars, contractors by name, times in the
 * job's zone. */
function recordFacts(r: Pick<AuditRecord, "kind" | "at" | "disclosed">, reading: Reading): string[] {
  const d = r.disclosed;
  const { nameOf, zone } = reading;
  const out: string[] = [];
  const who = (v: unknown) => (typeof v === "string" ? (nameOf(v) ?? v) : String(v));
  const titled = r.kind === "order.matched" || r.kind === "order.offered" || r.kind === "order.assigned";
  // Where the match ranked the one it chose, when the record shows the ranking (the dispatch team's).
  if (r.kind === "order.matched" && Array.isArray(d.candidates) && typeof d.chosen === "string") {
    const rank = (d.candidates as Array<{ contractor_id?: string }>).findIndex(
      (c) => c.contractor_id === d.chosen,
    );
    if (rank >= 0) out.push(`ranked ${rank + 1} of ${d.candidates.length}`);
  }
  if (typeof d.to_contractor === "string" && !titled) out.push(`to ${who(d.to_contractor)}`);
  if (typeof d.from_contractor === "string") out.push(`from ${who(d.from_contractor)}`);
  // The contractor the record names, unless it is who acted (the actor says so already) or the title did.
  if (
    typeof d.contractor_id === "string" &&
    d.to_contractor === undefined &&
    d.contractor_id !== d.actor_id &&
    r.kind !== "order.offered"
  )
    out.push(`contractor ${who(d.contractor_id)}`);
  if (typeof d.previous_status === "string" && typeof d.to !== "string")
    out.push(`was ${statusWord(d.previous_status)}`);
  if (typeof d.eta_minutes === "number") {
    const eta = new Date(Date.parse(r.at) + d.eta_minutes * 60_000).toISOString();
    out.push(`ETA ${zonedClock(eta, zone, Date.parse(r.at))} (in ${duration(d.eta_minutes)})`);
  }
  if (typeof d.start === "string") out.push(`booked from ${zonedClock(d.start, zone, Date.parse(r.at))}`);
  const window = d.to_window as { start?: unknown; end?: unknown } | undefined;
  if (window && typeof window.start === "string" && typeof window.end === "string")
    out.push(`window ${zonedSpan(window.start, window.end, zone)}`);
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
  accountName = null,
  zone = null,
}: {
  path: string;
  orderId: string;
  version: string;
  nameOf?: NameOf;
  /** The order's account's name (the dispatch team's view): an account key's records say it. */
  accountName?: string | null;
  /** The job's zone: each record's time is shown in it, named, as the rest of the order's times. */
  zone?: string | null;
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
  const reading: Reading = { nameOf, accountName, zone, at: minute.value };
  return (
    <>
      {records !== null && <Candidates records={records} reading={reading} />}
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
                <time class="tl-when" dateTime={r.at}>
                  {zonedClock(r.at, zone, reading.at)}
                </time>
                <span class="tl-what">
                  <strong>{recordTitle(r, nameOf)}</strong>
                  <span class="tl-actor" title={r.actor}>
                    {actorLabel(r.actor, reading, r.disclosed.actor_id)}
                  </span>
                  {recordFacts(r, reading).map((f) => (
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
function Candidates({ records, reading }: { records: AuditRecord[]; reading: Reading }) {
  const { nameOf } = reading;
  const latest = [...records]
    .reverse()
    .find((r) => Array.isArray(r.disclosed.candidates) && (r.disclosed.candidates as unknown[]).length > 0);
  if (!latest) return null;
  const list = latest.disclosed.candidates as Candidate[];
  return (
    <section class="panel" aria-label="Ranked candidates">
      <h3>Ranked candidates</h3>
      <p class="muted">
        As the {latest.kind.replace(/^order\./, "").replace(/_/g, " ")} record of{" "}
        {zonedClock(latest.at, reading.zone, reading.at)} ranked them, best first.
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
