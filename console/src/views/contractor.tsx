// The contractor's screen, made for a phone: the offers waiting for an answer with the time left, and the
// jobs held with their next step as one big button (On my way with an ETA, On site, Completed with the
// final cost). Live: an offer made, taken back or expired, a job assigned or taken away, shows at once.

import { signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { WORK_DONE_STATUSES } from "../../../src/domain/orders/statuses";
import { ApiProblem, get, post } from "../api";
import { clock, money, now, place, timeLeft, titleCase, zonedSpan } from "../format";
import { subscribe } from "../live";
import type { Counter, Invoice, Job, Offer, OrderStatus, StreamEvent } from "../types";
import { CounterForm, counterAsk } from "./counters";
import { InvoiceBuilder } from "./invoice-builder";
import { JobProof, phonePosition } from "./job-proof";
import { MyRatings } from "./ratings";
import { ArrivalWhen, StatusPill } from "./status";

const offers = signal<Map<string, Offer>>(new Map());
const jobs = signal<Map<string, Job>>(new Map());
/** Finished jobs, newest first: those completed and waiting for an invoice, and those whose invoice waits
 * for the account or was sent back (loaded, and changed in this session: approved and paid ones too). */
const done = signal<Job[]>([]);
const loadError = signal<string | null>(null);
const loading = signal(true);
/** What became of a counter the contractor sent (accepted, declined, expired), for a moment. */
const counterNotice = signal<string | null>(null);

const ACTIVE = new Set(["accepted", "en_route", "on_site"]);

/** The booked time of the active jobs, read again (the stream's jobs do not carry it). */
async function refreshBooked() {
  const listed = await get<{ jobs: Job[] }>("/api/contractor/v1/jobs");
  const next = new Map(jobs.value);
  for (const j of listed.jobs) {
    const held = next.get(j.order_id);
    if (held) next.set(j.order_id, { ...held, booked: j.booked ?? null });
  }
  jobs.value = next;
}

function setJob(job: Job) {
  const nextJobs = new Map(jobs.value);
  const nextOffers = new Map(offers.value);
  nextOffers.delete(job.order_id);
  if (ACTIVE.has(job.status)) {
    // The stream's job has no booked time: the one read before stands while the window stays; a new job
    // or a moved window reads it again.
    const held = jobs.value.get(job.order_id);
    const same = held && JSON.stringify(held.arrival_window) === JSON.stringify(job.arrival_window);
    nextJobs.set(job.order_id, job.booked === undefined && same ? { ...job, booked: held.booked } : job);
    if (job.booked === undefined && !same) void refreshBooked().catch(() => undefined);
  } else {
    nextJobs.delete(job.order_id);
    if ((WORK_DONE_STATUSES as readonly string[]).includes(job.status)) {
      done.value = [job, ...done.value.filter((j) => j.order_id !== job.order_id)];
    }
  }
  jobs.value = nextJobs;
  offers.value = nextOffers;
}

function drop(orderId: string) {
  const nextJobs = new Map(jobs.value);
  const nextOffers = new Map(offers.value);
  nextJobs.delete(orderId);
  nextOffers.delete(orderId);
  jobs.value = nextJobs;
  offers.value = nextOffers;
}

/** An offer with its counter sent (the card then waits on the account). */
function setCounter(orderId: string, counter: Counter) {
  const offer = offers.value.get(orderId);
  if (!offer) return;
  offers.value = new Map(offers.value).set(orderId, { ...offer, counter });
}

/** A counter sent: the card waits on the account, or, accepted at once by its policy, becomes the job. */
function countered(orderId: string, counter: Counter, job: Job | null) {
  if (!job) return setCounter(orderId, counter);
  counterNotice.value = `Counter accepted at once by the account's policy: ${counterAsk(counter)}. The job is yours.`;
  setJob(job);
}

/** What the account (or the deadline) made of the counter on an offer that leaves the list. */
function counterOutcome(event: StreamEvent, countered: Offer, job: Job | null) {
  const ask = countered.counter ? counterAsk(countered.counter) : "";
  if (job && event.type === "order.accepted") {
    counterNotice.value = `Counter accepted: ${ask}. The job is yours.`;
  } else if (event.type === "order.counter_expired") {
    counterNotice.value = `Your counter (${ask}) expired unanswered: the job went to someone else.`;
  } else if (event.type === "order.counter_declined" || event.type === "order.needs_dispatcher") {
    counterNotice.value = `The account declined your counter (${ask}): the job went to someone else.`;
  } else {
    counterNotice.value = `Your counter (${ask}) was withdrawn: the job is no longer offered to you.`;
  }
}

/** The counters of the offers listed (one sent from another device shows here too). */
async function refreshCounters() {
  const listed = await get<{ offers: Offer[] }>("/api/contractor/v1/offers");
  for (const o of listed.offers) if (o.counter) setCounter(o.order_id, o.counter);
}

function onEvent(event: StreamEvent) {
  const data = event.data as { order_id: string; held: boolean; offer: Offer | null; job: Job | null };
  if (event.type === "order.countered" && data.held) void refreshCounters().catch(() => undefined);
  const countered = offers.value.get(data.order_id);
  if (countered?.counter && (!data.held || data.job)) counterOutcome(event, countered, data.job);
  if (!data.held) return drop(data.order_id);
  if (data.offer) {
    const next = new Map(offers.value);
    // The stream's offer leaves the counter out: the one sent stays on the card.
    const same = countered?.offer_id === data.offer.offer_id ? countered.counter : undefined;
    next.set(data.order_id, same ? { ...data.offer, counter: same } : data.offer);
    offers.value = next;
    return;
  }
  if (data.job) setJob(data.job);
}

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    const [o, j, c, i] = await Promise.all([
      get<{ offers: Offer[] }>("/api/contractor/v1/offers"),
      get<{ jobs: Job[] }>("/api/contractor/v1/jobs"),
      get<{ jobs: Job[] }>("/api/contractor/v1/jobs?status=completed"),
      get<{ jobs: Job[] }>("/api/contractor/v1/jobs?status=invoiced"),
    ]);
    offers.value = new Map(o.offers.map((x) => [x.order_id, x]));
    jobs.value = new Map(j.jobs.map((x) => [x.order_id, x]));
    done.value = [...c.jobs, ...i.jobs];
  } catch (err) {
    loadError.value = err instanceof ApiProblem ? err.message : "Your work could not be loaded.";
  } finally {
    loading.value = false;
  }
}

export function ContractorView() {
  useEffect(() => {
    const stop = subscribe(onEvent);
    void load();
    return () => {
      stop();
      offers.value = new Map();
      jobs.value = new Map();
      done.value = [];
      counterNotice.value = null;
    };
  }, []);
  const offerList = [...offers.value.values()].sort((a, b) => a.deadline_at.localeCompare(b.deadline_at));
  const jobList = [...jobs.value.values()];
  return (
    <div class="phone">
      {loadError.value && (
        <p class="error" role="alert">
          {loadError.value}
        </p>
      )}
      <section aria-labelledby="offers-title">
        <h1 id="offers-title">
          Offers <span class="count">{offerList.length}</span>
        </h1>
        {counterNotice.value && (
          <p class="notice counter-notice" role="status">
            {counterNotice.value}
            <button
              type="button"
              class="btn btn-quiet btn-small"
              onClick={() => {
                counterNotice.value = null;
              }}
            >
              OK
            </button>
          </p>
        )}
        {offerList.length === 0 ? (
          <p class="empty">
            {loading.value ? "Loading…" : "No offers right now. New ones appear here at once."}
          </p>
        ) : (
          offerList.map((o) => <OfferCard key={o.offer_id} offer={o} />)
        )}
      </section>
      <section aria-labelledby="jobs-title">
        <h1 id="jobs-title">
          My jobs <span class="count">{jobList.length}</span>
        </h1>
        {jobList.length === 0 ? (
          <p class="empty">{loading.value ? "Loading…" : "No job in hand."}</p>
        ) : (
          jobList.map((j) => <JobCard key={j.order_id} job={j} />)
        )}
      </section>
      <MyRatings />
      {done.value.length > 0 && (
        <section aria-labelledby="done-title">
          <h2 id="done-title">Done</h2>
          {done.value.map((j) => (
            <article key={j.order_id} class="card job done" data-order-id={j.order_id} data-status={j.status}>
              <div class="card-head">
                <StatusPill status={j.status} />
                <span class="job-title">{titleCase(j.trade)}</span>
              </div>
              <p class="muted">{place(j.location)}</p>
              <JobInvoice job={j} />
            </article>
          ))}
        </section>
      )}
    </div>
  );
}

/** An offer the contractor countered: what it asked, until when the account may answer. */
function CounteredCard({ offer, counter }: { offer: Offer; counter: Counter }) {
  return (
    <article class="card offer countered" data-order-id={offer.order_id} data-status="countered">
      <div class="card-head">
        <span class="job-title">{titleCase(offer.trade)}</span>
        {offer.urgency !== "routine" && <span class={`urgency u-${offer.urgency}`}>{offer.urgency}</span>}
      </div>
      <p class="place">{place(offer.location)}</p>
      <p>{offer.description}</p>
      <p class="muted">Estimate {money(offer.estimated_cost_cents)}</p>
      <p class="ok-note" role="status">
        Counter sent: {counterAsk(counter)}, waiting for the account until {clock(counter.deadline_at)}
      </p>
      {counter.note && <p class="muted">Your note: “{counter.note}”</p>}
    </article>
  );
}

function OfferCard({ offer }: { offer: Offer }) {
  if (offer.counter) return <CounteredCard offer={offer} counter={offer.counter} />;
  return <PendingOfferCard offer={offer} />;
}

function PendingOfferCard({ offer }: { offer: Offer }) {
  const [busy, setBusy] = useState(false);
  const [countering, setCountering] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const left = timeLeft(offer.deadline_at, now.value);
  const act = async (action: "accept" | "decline", reason: string) => {
    setBusy(true);
    setError(null);
    try {
      if (action === "accept") {
        setJob(await post<Job>("/api/contractor/v1/offers/accept", { offer_id: offer.offer_id }));
      } else {
        const why = reason.trim();
        await post("/api/contractor/v1/offers/decline", {
          offer_id: offer.offer_id,
          ...(why ? { reason: why } : {}),
        });
        drop(offer.order_id);
      }
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "That did not go through; try again.");
      setBusy(false);
    }
  };
  return (
    <article class="card offer" data-order-id={offer.order_id} data-status="offered">
      <div class="card-head">
        <span class="job-title">{titleCase(offer.trade)}</span>
        {offer.urgency !== "routine" && <span class={`urgency u-${offer.urgency}`}>{offer.urgency}</span>}
        <span class={`countdown big ${left.seconds < 60 ? "urgent" : ""}`} title="Time left to answer">
          {left.text}
        </span>
      </div>
      <p class="place">{place(offer.location)}</p>
      <p>{offer.description}</p>
      <p class="muted">
        Estimate {money(offer.estimated_cost_cents)}
        {offer.nte_cents !== null && ` · NTE ${money(offer.nte_cents)}`}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {countering ? (
        <>
          <CounterForm offer={offer} onSent={(c, job) => countered(offer.order_id, c, job)} />
          <button
            type="button"
            class="btn btn-quiet btn-block counter-button"
            onClick={() => setCountering(false)}
          >
            Back to Accept or Decline
          </button>
        </>
      ) : (
        <OfferAnswers offer={offer} busy={busy} act={act} onCounter={() => setCountering(true)} />
      )}
    </article>
  );
}

/** Decline (with a reason, if the contractor gives one), Counter, Accept. */
function OfferAnswers(props: {
  offer: Offer;
  busy: boolean;
  act: (action: "accept" | "decline", reason: string) => Promise<void>;
  onCounter: () => void;
}) {
  const { offer, busy, act } = props;
  const [reason, setReason] = useState("");
  return (
    <>
      <details class="decline-reason">
        <summary>Say why, if you decline</summary>
        <label for={`decline-${offer.offer_id}`}>Reason for declining (optional)</label>
        <input
          id={`decline-${offer.offer_id}`}
          maxLength={500}
          placeholder="e.g. fully booked today, too far"
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </details>
      <div class="actions three">
        <button
          type="button"
          class="btn btn-quiet btn-big"
          disabled={busy}
          onClick={() => void act("decline", reason)}
        >
          Decline
        </button>
        <button type="button" class="btn btn-quiet btn-big" disabled={busy} onClick={props.onCounter}>
          Counter
        </button>
        <button
          type="button"
          class="btn btn-primary btn-big"
          disabled={busy}
          onClick={() => void act("accept", reason)}
        >
          Accept
        </button>
      </div>
    </>
  );
}

/** The price the job is done at, in dollars: the counter the account accepted, else the estimate. */
function priceOf(job: Job): string {
  return ((job.agreed_price_cents ?? job.estimated_cost_cents ?? 0) / 100).toFixed(2);
}

function AgreedPrice({ job }: { job: Job }) {
  if (typeof job.agreed_price_cents !== "number") return null;
  return <p class="agreed-price">Agreed price {money(job.agreed_price_cents)} (your counter)</p>;
}

/** When to be there (the window or arrive-by) and when the job is booked in the contractor's day. */
function JobWhen({ job }: { job: Job }) {
  return (
    <>
      <p class="job-when">
        <ArrivalWhen window={job.arrival_window} arriveBy={job.arrive_by} zone={job.time_zone} />
      </p>
      {job.booked && (
        <p class="job-booked" data-start={job.booked.start} data-end={job.booked.end}>
          Booked {zonedSpan(job.booked.start, job.booked.end, job.time_zone)}
        </p>
      )}
    </>
  );
}

function JobCard({ job }: { job: Job }) {
  const [eta, setEta] = useState("30");
  const [cost, setCost] = useState(priceOf(job));
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const report = async (body: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      setJob(await post<Job>("/api/contractor/v1/jobs/status", { order_id: job.order_id, ...body }));
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "That did not go through; try again.");
    } finally {
      setBusy(false);
    }
  };
  // The check-in and check-out carry the phone's position, when it gives one.
  const checkIn = async () => {
    setBusy(true);
    const position = await phonePosition();
    await report({ status: "on_site", ...(position ? { position } : {}) });
  };
  const checkOut = async () => {
    setBusy(true);
    const position = await phonePosition();
    await report({
      status: "completed",
      final_cost_cents: Math.round(Number(cost) * 100),
      ...(position ? { position } : {}),
    });
  };
  const etaId = `eta-${job.order_id}`;
  const costId = `cost-${job.order_id}`;
  return (
    <article class="card job" data-order-id={job.order_id} data-status={job.status}>
      <div class="card-head">
        <StatusPill status={job.status} />
        <span class="job-title">{titleCase(job.trade)}</span>
      </div>
      <p class="place">
        {[job.location_name, job.address].filter(Boolean).join(", ")}
        <br />
        {place(job.location)}
      </p>
      <p>{job.description}</p>
      <JobWhen job={job} />
      <AgreedPrice job={job} />
      {job.eta_at && job.status === "en_route" && (
        <p class="muted">You said you would arrive at {clock(job.eta_at)}.</p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {job.status === "accepted" && (
        <div class="step">
          <label for={etaId}>ETA (minutes)</label>
          <input
            id={etaId}
            type="number"
            inputMode="numeric"
            min={1}
            max={1440}
            value={eta}
            onInput={(e) => setEta((e.target as HTMLInputElement).value)}
          />
          <button
            type="button"
            class="btn btn-primary btn-big btn-block"
            disabled={busy || !(Number(eta) >= 1)}
            onClick={() => void report({ status: "en_route", eta_minutes: Math.round(Number(eta)) })}
          >
            On my way
          </button>
        </div>
      )}
      {job.status === "en_route" && (
        <div class="step">
          <button
            type="button"
            class="btn btn-primary btn-big btn-block"
            disabled={busy}
            onClick={() => void checkIn()}
          >
            On site
          </button>
        </div>
      )}
      {job.status === "on_site" && <JobProof job={job} />}
      {job.status === "on_site" && (
        <div class="step">
          <label for={costId}>Final cost ($)</label>
          <input
            id={costId}
            type="number"
            inputMode="decimal"
            min={0}
            step="0.01"
            value={cost}
            onInput={(e) => setCost((e.target as HTMLInputElement).value)}
          />
          <button
            type="button"
            class="btn btn-success btn-big btn-block"
            disabled={busy || !(Number(cost) >= 0) || cost === ""}
            onClick={() => void checkOut()}
          >
            Completed
          </button>
        </div>
      )}
      {job.nte_cents !== null && <NteRequest job={job} />}
      <details class="cannot">
        <summary>Cannot finish this job?</summary>
        <label for={`cannot-${job.order_id}`}>What stops you</label>
        <input
          id={`cannot-${job.order_id}`}
          maxLength={1000}
          placeholder="e.g. part not available, no access to the site"
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
        <button
          type="button"
          class="btn btn-danger btn-block"
          disabled={busy || !reason.trim()}
          onClick={() => void report({ status: "cannot_complete", reason: reason.trim() })}
        >
          Cannot complete
        </button>
      </details>
    </article>
  );
}

/** Dollars typed in a field as cents (null: not an amount). */
function cents(dollars: string): number | null {
  const n = Number(dollars);
  return dollars.trim() === "" || !Number.isFinite(n) || n < 0 ? null : Math.round(n * 100);
}

/** Ask the caller for a higher NTE (contractorRequestNte): the caller approves or rejects it. */
function NteRequest({ job }: { job: Job }) {
  const [amount, setAmount] = useState((((job.nte_cents ?? 0) * 1.25) / 100).toFixed(2));
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState<number | null>(null);
  const wanted = cents(amount);
  const send = async () => {
    if (wanted === null) return;
    setBusy(true);
    setError(null);
    try {
      const r = await post<{ requested_cents: number }>("/api/contractor/v1/jobs/nte-request", {
        order_id: job.order_id,
        requested_nte_cents: wanted,
        reason: reason.trim(),
      });
      setAsked(r.requested_cents);
      setReason("");
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "That did not go through; try again.");
    } finally {
      setBusy(false);
    }
  };
  const amountId = `nte-${job.order_id}`;
  const reasonId = `nte-why-${job.order_id}`;
  return (
    <details class="nte-more">
      <summary>Costs more than the NTE ({money(job.nte_cents)})?</summary>
      {asked !== null ? (
        <p class="ok-note" role="status">
          Asked for {money(asked)}: the caller approves or rejects it.
        </p>
      ) : (
        <>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <label for={amountId}>New NTE ($)</label>
          <input
            id={amountId}
            type="number"
            inputMode="decimal"
            min={0}
            step="0.01"
            value={amount}
            onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
          />
          <label for={reasonId}>What makes it cost more</label>
          <input
            id={reasonId}
            maxLength={1000}
            placeholder="e.g. corroded supply line to replace"
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          <button
            type="button"
            class="btn btn-primary btn-block"
            disabled={busy || wanted === null || wanted <= (job.nte_cents ?? 0) || !reason.trim()}
            onClick={() => void send()}
          >
            Request NTE increase
          </button>
        </>
      )}
    </details>
  );
}

/** A job's invoice once done: built line by line; then its fate (waiting, sent back with the account's
 * note, to revise; approved; paid). */
function JobInvoice({ job }: { job: Job }) {
  const sent = () => setJob({ ...job, status: "invoiced" });
  if (job.status === "completed") return <InvoiceBuilder orderId={job.order_id} onSent={sent} />;
  if (job.status === "revision_requested" || job.status === "invoice_rejected") {
    return <ReturnedInvoice key={job.status} job={job} onSent={sent} />;
  }
  const note: Partial<Record<OrderStatus, string>> = {
    invoiced: "Invoice sent: waiting for the account's approval.",
    approved: "Invoice approved: waiting for payment.",
    paid: "Invoice paid.",
  };
  return (
    <p class="ok-note" role="status">
      {note[job.status] ?? ""}
    </p>
  );
}

/** An invoice sent back (revision requested, or rejected): the account's reason and note, and the lines to
 * revise and send again. */
function ReturnedInvoice({ job, onSent }: { job: Job; onSent: () => void }) {
  const [invoice, setInvoice] = useState<Invoice | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<Invoice>(`/api/orders/${job.order_id}/invoice`).then(setInvoice, (err: unknown) =>
      setError(err instanceof ApiProblem ? err.message : "The invoice could not be loaded."),
    );
  }, [job.order_id]);
  if (error) {
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  }
  if (!invoice) return <p class="muted">Loading the invoice…</p>;
  const last = invoice.decisions.at(-1);
  return (
    <div class="returned">
      <p class="returned-why" data-decision={last?.decision}>
        <strong>
          {job.status === "invoice_rejected" ? "Rejected" : "Revision requested"} (version {invoice.version},{" "}
          {money(invoice.total_cents)})
        </strong>
        {last?.reason_code && <span class="reason-code">{titleCase(last.reason_code)}</span>}
        {last?.note && <span class="returned-note">“{last.note}”</span>}
      </p>
      <InvoiceBuilder orderId={job.order_id} lines={invoice.lines} revise onSent={onSent} />
    </div>
  );
}
