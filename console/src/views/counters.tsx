// Counter-offers (issue 33) in the console: the contractor's form that answers an offer with another price
// and/or arrival window, and the account's panel that shows a waiting counter against the estimate, with
// Accept and Decline. The rules are the service's (docs/work-orders.md, "Counter-offers").

import { useState } from "preact/hooks";
import { ApiProblem, type FieldProblem, post } from "../api";
import { clock, money, now, timeLeft } from "../format";
import type { Counter, Job, Offer, Order } from "../types";

/** Dollars typed as exact cents ("12.5" -> 1250), without a float's rounding; null: not an amount. */
function dollarsToCents(text: string): number | null {
  const m = /^\s*(\d{1,9})(?:\.(\d{0,2}))?\s*$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
}

/** How far a price is above (or below) the estimate, in whole percent: "+15 %", "-4 %". */
function againstEstimate(price: number, estimate: number): string {
  if (estimate <= 0) return "";
  const pct = Math.round(((price - estimate) * 100) / estimate);
  return `${pct >= 0 ? "+" : "−"}${Math.abs(pct)} %`;
}

function windowText(w: { start: string; end: string }): string {
  const day = new Date(w.start).toLocaleDateString("en-US", {
    weekday: "short",
    month: "short",
    day: "numeric",
  });
  return `${day}, ${clock(w.start)}–${clock(w.end)}`;
}

/** A problem's fields by the part of the form that shows them (price, window, note, the rest). */
function faultsOf(err: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!(err instanceof ApiProblem)) {
    out.set("form", "That did not go through; try again.");
    return out;
  }
  const place = (f: FieldProblem) =>
    f.field.startsWith("price_cents")
      ? "price"
      : f.field.startsWith("arrival_window")
        ? "window"
        : f.field.startsWith("note")
          ? "note"
          : "form";
  for (const f of err.errors) out.set(place(f), [out.get(place(f)), f.message].filter(Boolean).join("; "));
  if (err.errors.length === 0) out.set("form", err.message);
  return out;
}

/** A datetime-local value ("2026-11-29T14:00", the phone's time) as an ISO instant; null when empty. */
function localToIso(value: string): string | null {
  if (!value) return null;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}

/** What the form sends, or the field a figure typed cannot be read from. */
function counterBody(
  offer: Offer,
  fields: { price: string; start: string; end: string; note: string },
): { body: Record<string, unknown> } | { field: string; message: string } {
  const body: Record<string, unknown> = { offer_id: offer.offer_id };
  if (fields.price.trim()) {
    const cents = dollarsToCents(fields.price);
    if (cents === null) return { field: "price", message: "A price in dollars, at most two decimals." };
    body.price_cents = cents;
  }
  if (fields.start || fields.end) {
    const start = localToIso(fields.start);
    const end = localToIso(fields.end);
    if (!start || !end) return { field: "window", message: "Give both the window's start and end." };
    body.arrival_window = { start, end };
  }
  if (fields.note.trim()) body.note = fields.note.trim();
  return { body };
}

/** The contractor's counter: a price in dollars, a window (routine and scheduled work only), a note. */
export function CounterForm(props: {
  offer: Offer;
  /** The counter sent, and the job when the account's policy accepted it at once. */
  onSent: (counter: Counter, job: Job | null) => void;
}) {
  const { offer, onSent } = props;
  const [price, setPrice] = useState((offer.estimated_cost_cents / 100).toFixed(2));
  const [start, setStart] = useState("");
  const [end, setEnd] = useState("");
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [faults, setFaults] = useState<Map<string, string>>(new Map());
  const windowAllowed = offer.urgency === "routine" || offer.urgency === "scheduled";
  const id = (name: string) => `counter-${name}-${offer.offer_id}`;
  const send = async () => {
    const built = counterBody(offer, { price, start, end, note });
    if (!("body" in built)) return setFaults(new Map([[built.field, built.message]]));
    setBusy(true);
    setFaults(new Map());
    try {
      const sent = await post<{ counter: Counter; job: Job | null }>(
        "/api/contractor/v1/offers/counter",
        built.body,
      );
      onSent(sent.counter, sent.job);
    } catch (err) {
      setFaults(faultsOf(err));
      setBusy(false);
    }
  };
  const fault = (name: string) =>
    faults.get(name) && (
      <span class="field-error" id={id(`${name}-fault`)} role="alert">
        {faults.get(name)}
      </span>
    );
  return (
    <form
      class="counter-form"
      aria-label="Counter-offer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for={id("price")}>Your price ($)</label>
      <input
        class="counter-field"
        id={id("price")}
        inputMode="decimal"
        value={price}
        aria-invalid={faults.has("price")}
        aria-describedby={faults.has("price") ? id("price-fault") : undefined}
        onInput={(e) => setPrice((e.target as HTMLInputElement).value)}
      />
      {fault("price")}
      {windowAllowed && (
        <fieldset class="counter-window">
          <legend>Arrival window (optional)</legend>
          <label for={id("start")}>From</label>
          <input
            class="counter-field"
            id={id("start")}
            type="datetime-local"
            value={start}
            aria-invalid={faults.has("window")}
            onInput={(e) => setStart((e.target as HTMLInputElement).value)}
          />
          <label for={id("end")}>To</label>
          <input
            class="counter-field"
            id={id("end")}
            type="datetime-local"
            value={end}
            aria-invalid={faults.has("window")}
            onInput={(e) => setEnd((e.target as HTMLInputElement).value)}
          />
          {fault("window")}
        </fieldset>
      )}
      <label for={id("note")}>Note for the account (optional)</label>
      <input
        class="counter-field"
        id={id("note")}
        maxLength={1000}
        placeholder="e.g. two-storey access"
        value={note}
        onInput={(e) => setNote((e.target as HTMLInputElement).value)}
      />
      {fault("note")}
      {fault("form")}
      <button type="submit" class="btn btn-primary btn-big btn-block counter-button" disabled={busy}>
        Send counter
      </button>
    </form>
  );
}

/** What a sent counter asks, in one line. */
export function counterAsk(counter: Counter): string {
  return [
    counter.price_cents !== null ? money(counter.price_cents) : null,
    counter.arrival_window ? windowText(counter.arrival_window) : null,
  ]
    .filter(Boolean)
    .join(", ");
}

/** A refusal of the account's answer, as a sentence. */
function refusal(err: unknown): string {
  if (!(err instanceof ApiProblem)) return "The answer did not go through; try again.";
  if (err.code === "approval_limit_exceeded") {
    return `Above your approval limit of ${money(err.extra.approval_limit_cents as number)}: an approver with a higher limit or an admin accepts it.`;
  }
  if (err.code === "key_role_not_allowed") return `Your key may not accept counter-offers: ${err.message}`;
  if (err.code === "offer_expired") return `Too late: ${err.message}`;
  return err.message;
}

/** The counter waiting on an account's order: against the estimate, its deadline, Accept and Decline. */
export function CounterDecision(props: {
  order: Order;
  counter: Counter;
  onDecided: (order: Order & { counter: Counter | null }) => void;
}) {
  const { order, counter } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [declining, setDeclining] = useState(false);
  const [reason, setReason] = useState("");
  const left = timeLeft(counter.deadline_at, now.value);
  const answer = async (path: "counter-accept" | "counter-decline") => {
    setBusy(true);
    setError(null);
    try {
      const why = reason.trim();
      const body = {
        order_id: order.order_id,
        ...(path === "counter-decline" && why ? { reason: why } : {}),
      };
      props.onDecided(await post(`/api/dispatch/v1/orders/${path}`, body));
    } catch (err) {
      setError(refusal(err));
      setBusy(false);
    }
  };
  const reasonId = `counter-why-${order.order_id}`;
  return (
    <section class="counter-ask" aria-label="Counter-offer" data-counter-status={counter.status}>
      <p class="counter-head">
        <strong>The contractor asks another {counter.price_cents !== null ? "price" : "window"}</strong>
        <span class={`countdown ${left.seconds < 300 ? "urgent" : ""}`} title="Time left to answer">
          answer within {left.text}
        </span>
      </p>
      {counter.price_cents !== null && (
        <p class="counter-price">
          <strong>{money(counter.price_cents)}</strong> against the estimate of{" "}
          {money(order.estimated_cost_cents)}{" "}
          <span class="counter-pct">{againstEstimate(counter.price_cents, order.estimated_cost_cents)}</span>
        </p>
      )}
      {counter.arrival_window && <p>Arrival {windowText(counter.arrival_window)}</p>}
      {counter.note && <p class="nte-reason">“{counter.note}”</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {declining && (
        <>
          <label for={reasonId}>Why decline (optional; the contractor reads it)</label>
          <input
            id={reasonId}
            maxLength={1000}
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
        </>
      )}
      <div class="nte-actions">
        <button
          type="button"
          class="btn btn-quiet"
          disabled={busy}
          onClick={() => (declining ? void answer("counter-decline") : setDeclining(true))}
        >
          {declining ? "Decline counter" : "Decline…"}
        </button>
        <button
          type="button"
          class="btn btn-primary"
          disabled={busy}
          onClick={() => void answer("counter-accept")}
        >
          Accept {counter.price_cents !== null ? money(counter.price_cents) : "window"}
        </button>
      </div>
    </section>
  );
}
