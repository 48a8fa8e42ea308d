// The account's Requests (issue 35): what the people at its sites reported through the sites' request
// forms (or the account's agent reported), newest first, narrowed by status (pending first), each with its
// site, text, urgency, reporter, the model's guessed trade and its confidence, and the order it became or
// was linked to. A pending one is approved (a trade preset to the guess, required without one) or rejected
// (a reason required). The account's request policy (create / hold) is shown and set here (an admin key's
// decision: the service's refusal is shown as it says it). A new report makes no event: Refresh reads the
// list again; a request that became an order is read again when that order's event arrives (the policy's
// orders show up so, without a poll).
// The request's photos are not in its view (docs/customer-side.md): they go to the order it becomes.

import { signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { REQUEST_LIMITS, type REQUEST_STATUSES } from "../../../src/domain/requests/request";
import { TRADE_CODES } from "../../../src/domain/trades";
import { ApiProblem, allPages, get, post } from "../api";
import { ago, minute, titleCase } from "../format";
import { subscribe } from "../live";
import type { Order, StreamEvent } from "../types";

type RequestStatus = (typeof REQUEST_STATUSES)[number];
type PolicyMode = "create" | "hold";

interface WorkRequest {
  request_id: string;
  site_id: string;
  source: string;
  status: RequestStatus;
  description: string;
  urgency: "emergency" | "urgent" | "routine";
  name: string;
  contact: string;
  trade_guess: { trade: string | null; confidence: number };
  trade: string | null;
  order_id: string | null;
  reason: string | null;
  decided_at: string | null;
  created_at: string;
}

interface Policy {
  mode: PolicyMode;
  updated_at: string | null;
}

/** The filter: one status, or every request. */
type Filter = RequestStatus | "all";
const FILTERS: Array<[Filter, string]> = [
  ["pending", "Pending"],
  ["ordered", "Ordered"],
  ["linked", "Linked"],
  ["rejected", "Rejected"],
  ["all", "All"],
];

const STATUS_WORDS: Record<RequestStatus, string> = {
  pending: "Pending",
  ordered: "Ordered",
  linked: "Linked",
  rejected: "Rejected",
};

/** The newest requests the list shows (the API pages through the rest). */
const LOADED = 100;

const requests = signal<WorkRequest[]>([]);
const siteNames = signal<Map<string, string>>(new Map());
const filter = signal<Filter>("pending");
const loading = signal(true);
const loadError = signal<string | null>(null);

const problem = (err: unknown, fallback: string) => (err instanceof ApiProblem ? err.message : fallback);

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    const status = filter.value === "all" ? undefined : filter.value;
    const page = await get<{ requests: WorkRequest[] }>("/api/dispatch/v1/requests", {
      status,
      limit: LOADED,
    });
    // The sites' names, read again when a request names a site the console has not seen (one just added).
    if (page.requests.some((r) => !siteNames.value.has(r.site_id))) {
      const sites = await allPages<{ site_id: string; name: string }, "sites">(
        "/api/dispatch/v1/sites",
        "sites",
        { limit: 100 },
      );
      siteNames.value = new Map(sites.map((s) => [s.site_id, s.name]));
    }
    requests.value = page.requests;
  } catch (err) {
    loadError.value = problem(err, "Your requests could not be loaded.");
  } finally {
    loading.value = false;
  }
}

/** A request decided here: its row shows the outcome in place (until the list is read again). */
function replace(next: WorkRequest) {
  requests.value = requests.value.map((r) => (r.request_id === next.request_id ? next : r));
}

/** A request read again (its order's event): its row updated, or added when the filter shows it. */
function upsert(next: WorkRequest) {
  if (requests.value.some((r) => r.request_id === next.request_id)) return replace(next);
  if (filter.value !== "all" && filter.value !== next.status) return;
  requests.value = [...requests.value, next].sort((a, b) => b.created_at.localeCompare(a.created_at));
}

/** An order made from a request (its reference_id is the request's id): the request read again, so one the
 * policy made an order at once shows as such. Other events leave the list alone. */
function onEvent(event: StreamEvent) {
  const ref = (event.data.order as Order | undefined)?.reference_id;
  if (!ref?.startsWith("wrq_")) return;
  if (requests.value.some((r) => r.request_id === ref && r.status !== "pending")) return;
  get<WorkRequest>(`/api/dispatch/v1/requests/${encodeURIComponent(ref)}`).then(upsert, () => {
    // Not readable now: the next Refresh shows the truth.
  });
}

export function RequestsView() {
  useEffect(() => {
    const stop = subscribe(onEvent);
    void load();
    return () => {
      stop();
      requests.value = [];
    };
  }, []);
  return (
    <section class="requests" aria-labelledby="requests-title">
      <div class="board-head">
        <h1 id="requests-title">Requests</h1>
        <PolicyControl />
      </div>
      <div class="requests-bar">
        <label class="requests-filter request-inline-label">
          Status{" "}
          <select
            class="request-select"
            value={filter.value}
            onChange={(e) => {
              filter.value = (e.target as HTMLSelectElement).value as Filter;
              void load();
            }}
          >
            {FILTERS.map(([id, words]) => (
              <option key={id} value={id}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="btn btn-quiet btn-small" disabled={loading.value} onClick={() => load()}>
          Refresh
        </button>
      </div>
      {loadError.value && (
        <p class="error" role="alert">
          {loadError.value}
        </p>
      )}
      <RequestList />
    </section>
  );
}

function RequestList() {
  const list = requests.value;
  const at = minute.value;
  if (list.length === 0) {
    const words = filter.value === "all" ? "" : `${STATUS_WORDS[filter.value].toLowerCase()} `;
    return (
      <p class="empty">
        {loading.value
          ? "Loading…"
          : `No ${words}requests. Reports from your sites' request links (Sites: a site's request link) show here.`}
      </p>
    );
  }
  return (
    <ul class="rows request-rows">
      {list.map((r) => (
        <RequestRow key={r.request_id} request={r} at={at} />
      ))}
    </ul>
  );
}

function Guess({ guess }: { guess: WorkRequest["trade_guess"] }) {
  if (!guess.trade) return <span class="request-guess muted">No trade guessed</span>;
  return (
    <span class="request-guess" title="The keyword model's guess and its confidence">
      {titleCase(guess.trade)} <span class="muted">{Math.round(guess.confidence * 100)}%</span>
    </span>
  );
}

function RequestRow({ request: r, at }: { request: WorkRequest; at: number }) {
  return (
    <li class="row request-row" data-request-id={r.request_id} data-status={r.status}>
      <div class="row-open static request-open">
        <span class={`pill request-status request-${r.status}`}>{STATUS_WORDS[r.status]}</span>
        <span class="row-main">
          <span class="row-title">
            {siteNames.value.get(r.site_id) ?? r.site_id}
            <span class={`request-urgency urgency-${r.urgency}`}>{titleCase(r.urgency)}</span>
          </span>
          <span class="row-desc request-text">{r.description}</span>
          <span class="row-detail">
            {r.name} · {r.contact}
          </span>
          {r.status === "rejected" && r.reason && <span class="row-detail">Rejected: {r.reason}</span>}
        </span>
        <span class="row-side request-side">
          <Guess guess={r.trade_guess} />
          {r.trade && r.trade !== r.trade_guess.trade && <span class="muted">as {titleCase(r.trade)}</span>}
          <span class="muted">{ago(r.created_at, at)}</span>
          {r.order_id && (
            <span class="row-id">
              {r.status === "linked" ? "linked to " : "order "}
              <span class="request-order">{r.order_id}</span>
            </span>
          )}
          <span class="row-id">{r.request_id}</span>
        </span>
      </div>
      {r.status === "pending" && <Decide request={r} />}
    </li>
  );
}

function Decide({ request: r }: { request: WorkRequest }) {
  const [trade, setTrade] = useState(r.trade_guess.trade ?? "");
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const decide = async (path: string, body: Record<string, string>) => {
    setBusy(true);
    setError(null);
    try {
      replace(await post<WorkRequest>(path, { request_id: r.request_id, ...body }));
    } catch (err) {
      setError(problem(err, "The decision did not go through; try again."));
      setBusy(false);
    }
  };
  const tradeId = `rq-trade-${r.request_id}`;
  const reasonId = `rq-reason-${r.request_id}`;
  return (
    <div class="request-decide">
      <form
        class="request-approve"
        aria-label="Approve the request"
        onSubmit={(e) => {
          e.preventDefault();
          void decide("/api/dispatch/v1/requests/approve", { trade });
        }}
      >
        <label class="request-inline-label" for={tradeId}>
          Trade
        </label>
        <select
          id={tradeId}
          class="request-select"
          required
          value={trade}
          onChange={(e) => setTrade((e.target as HTMLSelectElement).value)}
        >
          {!r.trade_guess.trade && <option value="">Choose a trade</option>}
          {TRADE_CODES.map((t) => (
            <option key={t} value={t}>
              {titleCase(t)}
            </option>
          ))}
        </select>
        <button type="submit" class="btn btn-primary btn-small" disabled={busy}>
          Approve
        </button>
        {!rejecting && (
          <button type="button" class="btn btn-quiet btn-small" onClick={() => setRejecting(true)}>
            Reject…
          </button>
        )}
      </form>
      {rejecting && (
        <form
          class="request-reject"
          aria-label="Reject the request"
          onSubmit={(e) => {
            e.preventDefault();
            void decide("/api/dispatch/v1/requests/reject", { reason: reason.trim() });
          }}
        >
          <label class="request-reason-label" for={reasonId}>
            Reason (kept in the audit log; the reporter is not told)
          </label>
          <input
            id={reasonId}
            class="request-reason-field"
            required
            maxLength={REQUEST_LIMITS.rejectReasonLength}
            placeholder="e.g. a duplicate of this morning's call"
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="btn btn-quiet btn-small" onClick={() => setRejecting(false)}>
            Keep it
          </button>
          <button type="submit" class="btn btn-danger btn-small" disabled={busy || !reason.trim()}>
            Reject now
          </button>
        </form>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

const POLICY_WORDS: Record<PolicyMode, string> = {
  hold: "Hold every request for approval",
  create: "Create orders from confident guesses",
};

/** The account's request policy, and a control to change it (an admin key's; others see the refusal). */
function PolicyControl() {
  const [policy, setPolicy] = useState<Policy | null>(null);
  const [choice, setChoice] = useState<PolicyMode>("hold");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<Policy>("/api/dispatch/v1/request-policy").then(
      (p) => {
        setPolicy(p);
        setChoice(p.mode);
      },
      (err) => setError(problem(err, "The request policy could not be read.")),
    );
  }, []);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      setPolicy(await post<Policy>("/api/dispatch/v1/request-policy", { mode: choice }));
    } catch (err) {
      setError(problem(err, "The request policy could not be set."));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="request-policy"
      aria-label="Request policy"
      data-mode={policy?.mode ?? ""}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label class="request-inline-label" for="request-policy-mode">
        Policy
      </label>
      <select
        id="request-policy-mode"
        class="request-select"
        value={choice}
        onChange={(e) => setChoice((e.target as HTMLSelectElement).value as PolicyMode)}
      >
        {(["hold", "create"] as const).map((m) => (
          <option key={m} value={m}>
            {POLICY_WORDS[m]}
          </option>
        ))}
      </select>
      <button type="submit" class="btn btn-small" disabled={busy || !policy || choice === policy.mode}>
        Save
      </button>
      {error && (
        <p class="error request-policy-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
