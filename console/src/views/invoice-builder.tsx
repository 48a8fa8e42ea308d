// The contractor's invoice, line by line, on the phone: labour (hours x rate), materials (quantity x unit
// price, a description, an optional part number), trip charge, other, tax. Each line's amount and the
// totals are computed as it is typed by the service's own function (itemise, src/domain/orders/invoice.ts:
// whole hundredths x cents, rounded half up once per line), so what the phone shows is what the service
// stores. A 422 shows next to the field it names (`lines.1.quantity`).

import { useState } from "preact/hooks";
import { type InvoiceLineInput, itemise } from "../../../src/domain/orders/invoice";
import { ApiProblem, type FieldProblem, post } from "../api";
import { money } from "../format";
import type { InvoiceLineView } from "../types";

type Kind = InvoiceLineView["kind"];

/** A line as typed: every figure a string, dollars for money. */
interface Draft {
  key: number;
  kind: Kind;
  description: string;
  part_number: string;
  hours: string;
  rate: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

const KIND_LABEL: Record<Kind, string> = {
  labour: "Labour",
  materials: "Materials",
  trip_charge: "Trip charge",
  other: "Other",
  tax: "Tax",
};
const KINDS = Object.keys(KIND_LABEL) as Kind[];

let nextKey = 1;

const dollars = (cents: number | undefined) => (cents === undefined ? "" : (cents / 100).toFixed(2));

function blank(kind: Kind): Draft {
  return {
    key: nextKey++,
    kind,
    description: "",
    part_number: "",
    hours: "",
    rate: "",
    quantity: "1",
    unit_price: "",
    amount: "",
  };
}

/** A line the service showed, as a draft to revise. */
function draftOf(line: InvoiceLineView): Draft {
  return {
    ...blank(line.kind),
    description: line.description ?? "",
    part_number: line.part_number ?? "",
    hours: line.hours === undefined ? "" : String(line.hours),
    rate: dollars(line.rate_cents),
    quantity: line.quantity === undefined ? "1" : String(line.quantity),
    unit_price: dollars(line.unit_price_cents),
    amount: dollars(line.amount_cents),
  };
}

/** Dollars as typed, in cents, exactly (no float): null when not an amount with at most two decimals. */
function centsOf(typed: string): number | null {
  const m = /^\s*(\d{1,9})(?:\.(\d{1,2}))?\s*$/.exec(typed);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
}

/** A decimal as typed (hours, quantity), or null. */
function decimalOf(typed: string): number | null {
  const t = typed.trim();
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : null;
}

/** The line to send, or null while a figure is not a number yet. */
function inputOf(d: Draft): InvoiceLineInput | null {
  const description = d.description.trim();
  if (d.kind === "labour") {
    const hours = decimalOf(d.hours);
    const rate = centsOf(d.rate);
    if (hours === null || rate === null) return null;
    return { kind: "labour", hours, rate_cents: rate, ...(description ? { description } : {}) };
  }
  if (d.kind === "materials") {
    const quantity = decimalOf(d.quantity);
    const price = centsOf(d.unit_price);
    if (quantity === null || price === null || !description) return null;
    const part = d.part_number.trim();
    return {
      kind: "materials",
      description,
      quantity,
      unit_price_cents: price,
      ...(part ? { part_number: part } : {}),
    };
  }
  const amount = centsOf(d.amount);
  if (amount === null) return null;
  if (d.kind === "other") return description ? { kind: "other", description, amount_cents: amount } : null;
  return { kind: d.kind, amount_cents: amount, ...(description ? { description } : {}) };
}

/** Each line's amount (null: not computable yet) and its faults by field, the service's way. */
function computeLine(d: Draft): { amount: number | null; faults: FieldProblem[] } {
  const input = inputOf(d);
  if (!input) return { amount: null, faults: [] };
  const result = itemise([input]);
  if (Array.isArray(result)) return { amount: null, faults: result };
  return { amount: result.lines[0]?.amount_cents ?? null, faults: [] };
}

/** The faults of line `i` by its field name (`quantity`), from `lines.<i>.<field>`: the message without the
 * field's name the service may start it with, a limit in cents in dollars. */
function faultsOf(i: number, problems: readonly FieldProblem[]): Map<string, string> {
  const out = new Map<string, string>();
  const prefix = `lines.${i}.`;
  for (const p of problems) {
    if (!p.field.startsWith(prefix)) continue;
    const name = p.field.slice(prefix.length);
    let message = p.message.startsWith(p.field) ? p.message.slice(p.field.length).trim() : p.message;
    if (name.endsWith("_cents"))
      message = message.replace(/\b(\d+)\b( cents)?/g, (_, n: string) => money(Number(n)));
    out.set(name, message);
  }
  return out;
}

export interface BuilderProps {
  orderId: string;
  /** The lines to start from (a revision starts from the current ones); none: an empty invoice. */
  lines?: readonly InvoiceLineView[];
  revise?: boolean;
  /** Told once the service took the invoice. */
  onSent: () => void;
}

export function InvoiceBuilder(props: BuilderProps) {
  const [drafts, setDrafts] = useState<Draft[]>(() => (props.lines ?? []).map(draftOf));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [served, setServed] = useState<FieldProblem[]>([]);
  const computed = drafts.map(computeLine);
  const inputs = drafts.map(inputOf);
  const tax = computed.reduce((s, c, i) => s + (drafts[i]?.kind === "tax" ? (c.amount ?? 0) : 0), 0);
  const total = computed.reduce((s, c) => s + (c.amount ?? 0), 0);
  const ready =
    drafts.length > 0 && inputs.every((x) => x !== null) && computed.every((c) => c.faults.length === 0);
  // A change answers the service's last word on the lines: its marks go until the next send.
  const edit = (next: Draft[]) => {
    setDrafts(next);
    setServed([]);
    setError(null);
  };
  const change = (key: number, patch: Partial<Draft>) => {
    edit(drafts.map((d) => (d.key === key ? { ...d, ...patch } : d)));
  };
  const send = async () => {
    setBusy(true);
    setError(null);
    setServed([]);
    try {
      await post(
        props.revise ? "/api/contractor/v1/jobs/invoice/revise" : "/api/contractor/v1/jobs/invoice",
        {
          order_id: props.orderId,
          lines: inputs,
        },
      );
      props.onSent();
    } catch (err) {
      if (err instanceof ApiProblem && err.errors.some((e) => /^lines\.\d+\./.test(e.field))) {
        setServed(err.errors);
        const rest = err.errors.filter((e) => !/^lines\.\d+\./.test(e.field));
        setError(
          rest.length ? rest.map((e) => `${e.field}: ${e.message}`).join("; ") : "Check the lines marked.",
        );
      } else setError(err instanceof ApiProblem ? err.message : "That did not go through; try again.");
      setBusy(false);
    }
  };
  return (
    <div class="step invoice-builder">
      {drafts.map((d, i) => (
        <LineFields
          key={d.key}
          orderId={props.orderId}
          index={i}
          draft={d}
          amount={computed[i]?.amount ?? null}
          faults={faultsOf(i, [...(computed[i]?.faults ?? []).map(reindex(i)), ...served])}
          onChange={(patch) => change(d.key, patch)}
          onRemove={() => edit(drafts.filter((x) => x.key !== d.key))}
        />
      ))}
      <fieldset class="add-lines">
        <legend class="sr-only">Add a line</legend>
        {KINDS.map((k) => (
          <button
            key={k}
            type="button"
            class="btn btn-quiet btn-small"
            disabled={k === "tax" && drafts.some((d) => d.kind === "tax")}
            onClick={() => edit([...drafts, blank(k)])}
          >
            + {KIND_LABEL[k]}
          </button>
        ))}
      </fieldset>
      <dl class="invoice-totals" aria-live="polite">
        <dt>Subtotal</dt>
        <dd data-total="subtotal">{money(total - tax)}</dd>
        <dt>Tax</dt>
        <dd data-total="tax">{money(tax)}</dd>
        <dt>Total</dt>
        <dd data-total="total">{money(total)}</dd>
      </dl>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button
        type="button"
        class="btn btn-primary btn-big btn-block"
        disabled={busy || !ready}
        onClick={() => void send()}
      >
        {props.revise ? "Send revised invoice" : "Send invoice"}
      </button>
    </div>
  );
}

/** A fault itemise found on a line checked alone (`lines.0.x`), as line `i`'s. */
const reindex = (i: number) => (p: FieldProblem) => ({
  ...p,
  field: p.field.replace(/^lines\.0\./, `lines.${i}.`),
});

interface LineProps {
  orderId: string;
  index: number;
  draft: Draft;
  amount: number | null;
  faults: Map<string, string>;
  onChange: (patch: Partial<Draft>) => void;
  onRemove: () => void;
}

function LineFields({ orderId, index, draft, amount, faults, onChange, onRemove }: LineProps) {
  const id = (f: string) => `inv-${orderId}-${draft.key}-${f}`;
  const field = (
    name: keyof Draft,
    label: string,
    served: string,
    opts: { decimal?: boolean; optional?: boolean } = {},
  ) => {
    const fault = faults.get(served);
    return (
      <div class="inv-field">
        <label for={id(name)}>{label}</label>
        <input
          id={id(name)}
          inputMode={opts.decimal ? "decimal" : "text"}
          value={draft[name] as string}
          aria-invalid={fault ? true : undefined}
          aria-describedby={fault ? id(`${name}-fault`) : undefined}
          onInput={(e) => onChange({ [name]: (e.target as HTMLInputElement).value })}
        />
        {fault && (
          <span class="field-error" id={id(`${name}-fault`)}>
            {fault}
          </span>
        )}
      </div>
    );
  };
  const k = draft.kind;
  return (
    <fieldset class={`inv-line inv-${k}`} data-line={index}>
      <legend>
        Line {index + 1}: {KIND_LABEL[k]}
      </legend>
      {k === "labour" && (
        <div class="inv-row">
          {field("hours", "Hours", "hours", { decimal: true })}
          {field("rate", "Rate ($/h)", "rate_cents", { decimal: true })}
        </div>
      )}
      {(k === "materials" || k === "other") && field("description", "Description", "description")}
      {k === "materials" && field("part_number", "Part number (optional)", "part_number")}
      {k === "materials" && (
        <div class="inv-row">
          {field("quantity", "Quantity", "quantity", { decimal: true })}
          {field("unit_price", "Unit price ($)", "unit_price_cents", { decimal: true })}
        </div>
      )}
      {k !== "labour" &&
        k !== "materials" &&
        field("amount", "Amount ($)", "amount_cents", { decimal: true })}
      {faults.get("amount_cents") && (k === "labour" || k === "materials") && (
        <span class="field-error">{faults.get("amount_cents")}</span>
      )}
      <div class="inv-line-foot">
        <span class="inv-amount" data-amount>
          {amount === null ? "—" : money(amount)}
        </span>
        <button
          type="button"
          class="btn btn-quiet btn-small"
          aria-label={`Remove line ${index + 1}`}
          onClick={onRemove}
        >
          Remove
        </button>
      </div>
    </fieldset>
  );
}
