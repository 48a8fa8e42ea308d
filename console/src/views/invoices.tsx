// The account's invoices: those waiting for its decision (orders `invoiced`), approved ones (to mark paid)
// and paid ones, each listed from the order list filtered by status and kept live by the account's orders
// (account.tsx holds the page's one event stream). Opening one shows its lines, totals, the checks with
// their figures (a flag highlighted), its versions and the decisions so far, and the buttons its status
// allows: Approve (the version shown), Reject (a reason code and a note), Request revision (a note), Mark
// paid (a reference and the date).

import { useEffect, useState } from "preact/hooks";
import { INVOICE_REJECTION_CODES } from "../../../src/domain/orders/invoice";
import { ApiProblem, allPages, get, post } from "../api";
import { money, place, titleCase } from "../format";
import type { Invoice, Order, OrderStatus } from "../types";
import { accountOrders } from "./account";
import { StatusPill } from "./status";

type Tab = "invoiced" | "approved" | "paid";
const TABS: Array<[Tab, string]> = [
  ["invoiced", "Waiting"],
  ["approved", "Approved"],
  ["paid", "Paid"],
];

export function AccountInvoices() {
  const [tab, setTab] = useState<Tab>("invoiced");
  const [loaded, setLoaded] = useState<Order[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    setLoaded([]);
    allPages<Order, "orders">("/api/dispatch/v1/orders", "orders", { status: tab, limit: 100 }, 3).then(
      setLoaded,
      (err: unknown) =>
        setError(err instanceof ApiProblem ? err.message : "The invoices could not be loaded."),
    );
  }, [tab]);
  // The newer of each order's two versions (the list loaded, the live one), in the tab's status now.
  const live = accountOrders.value;
  const byId = new Map(loaded.map((o) => [o.order_id, o]));
  for (const o of live.values()) {
    const held = byId.get(o.order_id);
    if (!held || held.updated_at <= o.updated_at) byId.set(o.order_id, o);
  }
  const list = [...byId.values()]
    .filter((o) => o.status === tab)
    .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
  return (
    <section class="account invoices" aria-labelledby="invoices-title">
      <div class="board-head">
        <h1 id="invoices-title">Invoices</h1>
        <nav class="tabs sub-tabs" aria-label="Invoices by status">
          {TABS.map(([id, name]) => (
            <button
              key={id}
              type="button"
              class={`tab ${tab === id ? "tab-on" : ""}`}
              aria-pressed={tab === id}
              onClick={() => {
                setTab(id);
                setOpen(null);
              }}
            >
              {name}
            </button>
          ))}
        </nav>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {list.length === 0 ? (
        <p class="empty">{tab === "invoiced" ? "No invoice waits for your decision." : "None yet."}</p>
      ) : (
        <ul class="rows">
          {list.map((o) => (
            <InvoiceRow
              key={o.order_id}
              order={o}
              open={open === o.order_id}
              onToggle={() => setOpen(open === o.order_id ? null : o.order_id)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function InvoiceRow({ order, open, onToggle }: { order: Order; open: boolean; onToggle: () => void }) {
  return (
    <li class={`row st-row-${order.status}`} data-order-id={order.order_id} data-status={order.status}>
      <div class="row-open static">
        <StatusPill status={order.status} />
        <span class="row-main">
          <span class="row-title">
            {titleCase(order.trade)}
            <span class="row-place">{place(order.location)}</span>
            {order.reference_id && <span class="ref">{order.reference_id}</span>}
          </span>
          <span class="row-desc">{order.description}</span>
        </span>
        <span class="row-side">
          <span class="row-id">{order.order_id}</span>
          <button type="button" class="btn btn-quiet btn-small" aria-expanded={open} onClick={onToggle}>
            {open ? "Close invoice" : "Open invoice"}
          </button>
        </span>
      </div>
      {open && <InvoicePanel orderId={order.order_id} status={order.status} />}
    </li>
  );
}

/** A problem as the approver should read it: the limit, the version sent meanwhile, or the service's words. */
function problemText(err: unknown): string {
  if (!(err instanceof ApiProblem)) return "That did not go through; try again.";
  const x = err.extra;
  if (err.code === "approval_limit_exceeded" && typeof x.approval_limit_cents === "number") {
    return `Above your approval limit of ${money(x.approval_limit_cents)}: an approver with a higher limit (or an admin key) must approve it.`;
  }
  if (err.code === "invoice_changed" && typeof x.version === "number") {
    const total = typeof x.total_cents === "number" ? ` (${money(x.total_cents)})` : "";
    return `The contractor sent version ${x.version}${total} meanwhile: reload to see it before deciding.`;
  }
  if (err.code === "key_role_not_allowed") return `Your key may not do this: ${err.message}`;
  return err.message;
}

function InvoicePanel({ orderId, status }: { orderId: string; status: OrderStatus }) {
  const [invoice, setInvoice] = useState<Invoice | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [stale, setStale] = useState(false);
  const load = () => {
    setStale(false);
    get<Invoice>(`/api/orders/${orderId}/invoice`).then(setInvoice, (err: unknown) =>
      setError(problemText(err)),
    );
  };
  // Read again when the order's status moves (a revision sent, a decision made elsewhere).
  useEffect(load, [orderId, status]);
  const act = async (path: string, body: Record<string, unknown>) => {
    setError(null);
    try {
      setInvoice(await post<Invoice>(path, { order_id: orderId, ...body }));
      return true;
    } catch (err) {
      setError(problemText(err));
      if (err instanceof ApiProblem && err.code === "invoice_changed") setStale(true);
      return false;
    }
  };
  if (!invoice) {
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading the invoice…</p>
    );
  }
  return (
    <div class="invoice-panel" data-version={invoice.version} data-invoice-status={invoice.status}>
      <InvoiceLines invoice={invoice} />
      <InvoiceChecks invoice={invoice} />
      <InvoiceHistory invoice={invoice} />
      {error && (
        <div class="error" role="alert">
          {error}
          {stale && (
            <button type="button" class="btn btn-quiet btn-small" onClick={load}>
              Reload
            </button>
          )}
        </div>
      )}
      {invoice.status === "submitted" && <DecisionForm version={invoice.version} act={act} />}
      {invoice.status === "approved" && <PaidForm act={act} />}
    </div>
  );
}

function lineText(l: Invoice["lines"][number]): string {
  if (l.kind === "labour") return `${l.hours} h × ${money(l.rate_cents)}/h`;
  if (l.kind === "materials") return `${l.quantity} × ${money(l.unit_price_cents)}`;
  return "";
}

function InvoiceLines({ invoice }: { invoice: Invoice }) {
  return (
    <table class="invoice-lines">
      <caption>
        Version {invoice.version} of the invoice{invoice.itemised ? "" : " (a total, not itemised)"}
      </caption>
      <thead>
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Detail</th>
          <th scope="col" class="num">
            Amount
          </th>
        </tr>
      </thead>
      <tbody>
        {invoice.lines.map((l, i) => (
          <tr key={i} data-kind={l.kind}>
            <td>{titleCase(l.kind)}</td>
            <td>
              {[l.description, l.part_number && `part ${l.part_number}`, lineText(l)]
                .filter(Boolean)
                .join(" · ")}
            </td>
            <td class="num">{money(l.amount_cents)}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={2}>
            Subtotal
          </th>
          <td class="num">{money(invoice.subtotal_cents)}</td>
        </tr>
        <tr>
          <th scope="row" colSpan={2}>
            Tax
          </th>
          <td class="num">{money(invoice.tax_cents)}</td>
        </tr>
        <tr class="grand">
          <th scope="row" colSpan={2}>
            Total
          </th>
          <td class="num" data-total="total">
            {money(invoice.total_cents)}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}

/** A check's figure as read: cents as dollars, a tolerance as a percentage, hours with h. */
function figure(name: string, value: number | null): string {
  if (value === null) return "—";
  if (name.endsWith("_cents")) return money(value);
  if (name === "tolerance") return `${Math.round(value * 100)} %`;
  if (name.endsWith("hours")) return `${value} h`;
  return String(value);
}

const CHECK_LABEL: Record<string, string> = {
  within_nte: "Within the NTE.",
  against_estimate: "Against the estimate.",
  labour_hours_vs_time_on_site: "Labour hours against time on site.",
  labour_rate_vs_index: "Labour rate against the trade index.",
  proof_required: "Proof required.",
};

/** A figure's name as read: total_cents -> Total, nte_in_force_cents -> NTE in force. */
function figureName(name: string): string {
  return titleCase(name.replace(/_cents$/, "")).replace(/\bnte\b/i, "NTE");
}

const CHECK_MARK = { pass: "Pass", flag: "Flag", not_applicable: "n/a" } as const;

function InvoiceChecks({ invoice }: { invoice: Invoice }) {
  return (
    <section class="invoice-checks" aria-label="Checks">
      <h3>
        Checks{" "}
        <span class={`count ${invoice.flags > 0 ? "count-alert" : ""}`}>
          {invoice.flags} {invoice.flags === 1 ? "flag" : "flags"}
        </span>
      </h3>
      <ul>
        {invoice.checks.map((c) => (
          <li
            key={c.code}
            class={`inv-check inv-check-${c.result}`}
            data-check={c.code}
            data-result={c.result}
          >
            <span class="inv-check-mark">{CHECK_MARK[c.result]}</span>
            <span class="inv-check-body">
              <strong>{CHECK_LABEL[c.code] ?? titleCase(c.code)}</strong> {c.message}
              <span class="inv-check-figures">
                {Object.entries(c.figures).map(([k, v]) => (
                  <span key={k}>
                    {figureName(k)}: {figure(k, v)}
                  </span>
                ))}
              </span>
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

const DECISION_LABEL = {
  approved: "Approved",
  rejected: "Rejected",
  revision_requested: "Revision requested",
  paid: "Paid",
} as const;

function InvoiceHistory({ invoice }: { invoice: Invoice }) {
  return (
    <div class="invoice-history">
      <h3>Versions</h3>
      <ol>
        {invoice.versions.map((v) => (
          <li key={v.version}>
            Version {v.version}: {money(v.total_cents)}, sent {v.created_at.slice(0, 16).replace("T", " ")}{" "}
            UTC
          </li>
        ))}
      </ol>
      {invoice.decisions.length > 0 && (
        <>
          <h3>Decisions</h3>
          <ol>
            {invoice.decisions.map((d) => (
              <li key={d.decided_at + d.decision} data-decision={d.decision}>
                {DECISION_LABEL[d.decision]} (version {d.version}, {money(d.total_cents)})
                {d.by_policy && " by the account's policy"}
                {d.reason_code && ` · ${titleCase(d.reason_code)}`}
                {d.note && ` · “${d.note}”`}
                {d.payment_reference && ` · ${d.payment_reference} on ${d.paid_on}`}
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

type Act = (path: string, body: Record<string, unknown>) => Promise<boolean>;
const DECIDE = "/api/dispatch/v1/orders/invoice-decision";

function DecisionForm({ version, act }: { version: number; act: Act }) {
  const [mode, setMode] = useState<"reject" | "request_revision" | null>(null);
  const [reason, setReason] = useState("");
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const run = async (body: Record<string, unknown>) => {
    setBusy(true);
    if (await act(DECIDE, { version, ...body })) setMode(null);
    setBusy(false);
  };
  const noteNeeded = mode === "request_revision" || reason === "other";
  return (
    <div class="invoice-decide">
      <div class="nte-actions">
        <button
          type="button"
          class="btn btn-quiet"
          disabled={busy}
          onClick={() => setMode("request_revision")}
        >
          Request revision
        </button>
        <button type="button" class="btn btn-danger" disabled={busy} onClick={() => setMode("reject")}>
          Reject
        </button>
        <button
          type="button"
          class="btn btn-primary"
          disabled={busy}
          onClick={() => void run({ decision: "approve" })}
        >
          Approve version {version}
        </button>
      </div>
      {mode && (
        <div class="decide-form">
          {mode === "reject" && (
            <>
              <label for="reject-reason">Reason</label>
              <select
                id="reject-reason"
                value={reason}
                onChange={(e) => setReason((e.target as HTMLSelectElement).value)}
              >
                <option value="">Choose a reason…</option>
                {INVOICE_REJECTION_CODES.map((c) => (
                  <option key={c} value={c}>
                    {titleCase(c)}
                  </option>
                ))}
              </select>
            </>
          )}
          <label for="decide-note">{noteNeeded ? "Note (required)" : "Note (optional)"}</label>
          <textarea
            id="decide-note"
            maxLength={1000}
            rows={2}
            value={note}
            placeholder={mode === "reject" ? "Why it is rejected" : "What the contractor should change"}
            onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
          />
          <button
            type="button"
            class="btn btn-primary"
            disabled={busy || (mode === "reject" && !reason) || (noteNeeded && !note.trim())}
            onClick={() =>
              void run({
                decision: mode,
                ...(mode === "reject" ? { reason_code: reason } : {}),
                ...(note.trim() ? { note: note.trim() } : {}),
              })
            }
          >
            {mode === "reject" ? "Send rejection" : "Send revision request"}
          </button>
        </div>
      )}
    </div>
  );
}

/** Today, the browser's day, as YYYY-MM-DD. */
function today(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function PaidForm({ act }: { act: Act }) {
  const [reference, setReference] = useState("");
  const [paidOn, setPaidOn] = useState(today);
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    await act("/api/dispatch/v1/orders/invoice-paid", {
      payment_reference: reference.trim(),
      paid_on: paidOn,
    });
    setBusy(false);
  };
  return (
    <div class="invoice-paid decide-form">
      <label for="paid-ref">Payment reference</label>
      <input
        id="paid-ref"
        maxLength={100}
        placeholder="e.g. ACH-2026-11-0042"
        value={reference}
        onInput={(e) => setReference((e.target as HTMLInputElement).value)}
      />
      <label for="paid-on">Paid on</label>
      <input
        id="paid-on"
        type="date"
        value={paidOn}
        onInput={(e) => setPaidOn((e.target as HTMLInputElement).value)}
      />
      <button
        type="button"
        class="btn btn-primary"
        disabled={busy || !reference.trim() || !paidOn}
        onClick={() => void send()}
      >
        Mark paid
      </button>
    </div>
  );
}
