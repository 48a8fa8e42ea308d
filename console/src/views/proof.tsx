// An order's proof of work, as the account and the dispatch team read it: the contractor's check-in and
// check-out (a far one flagged), the photos and documents with their thumbnails, the checklist's answers,
// the site contact's signature, and the service report once the job is done. Read again whenever the order changes.

import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { clock } from "../format";
import type { Attachment, Order, SiteCheck } from "../types";
import type { Checklist } from "./job-checklist";

/** When a step happened: its time today, its date too on another day (a job reviewed days later). */
function When({ iso }: { iso: string }) {
  const at = new Date(iso);
  const today = at.toDateString() === new Date().toDateString();
  const date = today ? "" : `${at.toLocaleDateString("en-US", { month: "short", day: "numeric" })}, `;
  return <time dateTime={iso}>{`${date}${clock(iso)}`}</time>;
}

function CheckLine({ label, check }: { label: string; check: SiteCheck }) {
  const where =
    check.position === null
      ? "no position given"
      : check.distance_miles === null
        ? `${check.position.lat.toFixed(4)}, ${check.position.lon.toFixed(4)}`
        : `${check.distance_miles} mi from the site`;
  return (
    <li class={check.flagged ? "proof-check flagged" : "proof-check"} data-check={label.toLowerCase()}>
      <strong>{label}</strong> <When iso={check.at} /> · {where}
      {check.position?.accuracy_m != null && (
        <span class="muted"> (±{Math.round(check.position.accuracy_m)} m)</span>
      )}
      {check.flagged && (
        <span class="flag" title={`Further than ${check.tolerance_miles} mi from the order's location`}>
          far from the site
        </span>
      )}
    </li>
  );
}

/** An answer as the desk reads it: Yes/No, a number in its unit, a note, the photo's place. */
function answerText(item: Checklist["items"][number], files: readonly Attachment[] | null): string {
  const value = item.answer?.value;
  if (value === undefined) return "—";
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (item.kind === "number") return `${value}${item.unit ? ` ${item.unit}` : ""}`;
  if (item.kind === "photo") {
    const i = (files ?? []).filter((f) => f.kind === "photo").findIndex((f) => f.attachment_id === value);
    return i >= 0 ? `photo ${i + 1}` : String(value);
  }
  return String(value);
}

export function Proof({ order }: { order: Order }) {
  const [files, setFiles] = useState<Attachment[] | null>(null);
  const [checklist, setChecklist] = useState<Checklist | null>(null);
  useEffect(() => {
    let stale = false;
    get<{ attachments: Attachment[] }>(`/api/orders/${order.order_id}/attachments`)
      .then((page) => {
        if (!stale) setFiles(page.attachments);
      })
      .catch(() => {
        if (!stale) setFiles([]);
      });
    get<Checklist>(`/api/orders/${order.order_id}/checklist`)
      .then((c) => {
        if (!stale) setChecklist(c);
      })
      .catch(() => {
        if (!stale) setChecklist(null);
      });
    return () => {
      stale = true;
    };
  }, [order.order_id, order.updated_at]);
  const checks = [
    order.check_in ? <CheckLine key="in" label="Check-in" check={order.check_in} /> : null,
    order.check_out ? <CheckLine key="out" label="Check-out" check={order.check_out} /> : null,
  ].filter(Boolean);
  const signature = files?.filter((f) => f.kind === "signature").at(-1);
  const shown = files?.filter((f) => f.kind !== "signature") ?? [];
  const answered = checklist?.items.some((i) => i.answer !== null) ?? false;
  if (checks.length === 0 && (files === null || files.length === 0) && !order.report_url && !answered)
    return null;
  return (
    <section class="panel proof" aria-label="Proof of work">
      <h3>Proof of work</h3>
      {checks.length > 0 && <ul class="proof-checks">{checks}</ul>}
      {shown.length > 0 && (
        <ul class="proof-files">
          {shown.map((f) => (
            <li key={f.attachment_id} class="proof-file" data-kind={f.kind}>
              <a href={f.content_url} target="_blank" rel="noopener" title={`SHA-256 ${f.sha256}`}>
                {f.thumbnail_url ? (
                  <img
                    src={f.thumbnail_url}
                    alt={f.caption ?? `${f.kind} ${f.attachment_id}`}
                    loading="lazy"
                  />
                ) : (
                  <span class="proof-doc">PDF</span>
                )}
              </a>
              <span class="proof-caption">{f.caption ?? f.filename ?? f.kind}</span>
              <span class="muted">by the {f.uploaded_by}</span>
            </li>
          ))}
        </ul>
      )}
      {checklist && answered && (
        <dl class="proof-checklist" aria-label="Checklist">
          {checklist.items.map((item) => (
            <div key={item.item_id} data-item-id={item.item_id}>
              <dt>{item.label}</dt>
              <dd>{answerText(item, files)}</dd>
            </div>
          ))}
        </dl>
      )}
      {signature && (
        <div class="proof-signature" data-signer={signature.signer_name ?? ""}>
          {signature.thumbnail_url && (
            <img src={signature.thumbnail_url} alt={`Signature of ${signature.signer_name}`} />
          )}
          <span>
            Signed by <strong>{signature.signer_name}</strong> <When iso={signature.created_at} />
          </span>
        </div>
      )}
      {order.report_url && (
        <a
          class="btn btn-quiet btn-small proof-report"
          href={order.report_url}
          target="_blank"
          rel="noopener"
        >
          Service report (PDF)
        </a>
      )}
    </section>
  );
}
