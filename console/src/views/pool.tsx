// The dispatch team's contractor pool (dispatcher.contractors): each contractor's standing, capacity, open
// jobs and verifications (expired and expiring ones marked), filtered by name, trade, state and standing,
// with the pool actions (dispatcher.pool: activate or deactivate, exclude or include) and their reason.

import { useEffect, useState } from "preact/hooks";
import { TRADE_CODES } from "../../../src/domain/trades";
import { ApiProblem, get, post } from "../api";
import { titleCase } from "../format";
import { aggregateLine, type RatingAggregate } from "./ratings";

type Standing = "active" | "inactive" | "excluded";
type Verification = "not_verified" | "expired" | "expiring" | "verified";

interface PoolContractor {
  contractor_id: string;
  name: string;
  trades: string[];
  states: string[];
  status: Standing;
  rating: number;
  /** The accounts' ratings as a whole (dispatcher.contractors). */
  ratings?: RatingAggregate;
  capacity: {
    max_active_jobs: number;
    in_use: number;
    free: number;
    open_jobs: number;
    pending_offers: number;
  };
  verification: {
    insurance_verified_until: string | null;
    insurance: Verification;
    license_verified_until: string | null;
    license: Verification;
  };
}

const VERIFICATION_LABEL: Record<Verification, string> = {
  not_verified: "not verified",
  expired: "expired",
  expiring: "expiring",
  verified: "verified",
};

type Action = "activate" | "deactivate" | "exclude" | "include";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

interface PoolFilter {
  name: string;
  trade: string;
  state: string;
  standing: string;
}

/** The pool's contractors matching `filter`, 50 a page: the first page loaded after typing pauses, `more`
 * appends the next; `changed` shows a contractor's new standing without loading again. */
function usePoolPages({ name, trade, state, standing }: PoolFilter) {
  const [list, setList] = useState<PoolContractor[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const query = (after?: string) =>
    get<{ contractors: PoolContractor[]; next_cursor: string | null }>("/api/dispatcher/v1/contractors", {
      name: name.trim() || undefined,
      trade: trade || undefined,
      state: state.trim().toUpperCase() || undefined,
      status: standing || undefined,
      limit: 50,
      cursor: after,
    });

  useEffect(() => {
    let stale = false;
    const timer = setTimeout(async () => {
      try {
        const page = await query();
        if (stale) return;
        setList(page.contractors);
        setCursor(page.next_cursor);
        setError(null);
      } catch (err) {
        if (!stale) setError(err instanceof ApiProblem ? err.message : "The pool could not be loaded.");
      }
    }, 200);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [name, trade, state, standing]);

  const more = async () => {
    if (!cursor) return;
    try {
      const page = await query(cursor);
      setList([...(list ?? []), ...page.contractors]);
      setCursor(page.next_cursor);
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The pool could not be loaded.");
    }
  };

  const changed = (id: string, status: Standing) =>
    setList((list ?? []).map((c) => (c.contractor_id === id ? { ...c, status } : c)));

  return { list, cursor, error, more, changed };
}

export function Pool() {
  const [name, setName] = useState("");
  const [trade, setTrade] = useState("");
  const [state, setState] = useState("");
  const [standing, setStanding] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const { list, cursor, error, more, changed } = usePoolPages({ name, trade, state, standing });

  return (
    <section aria-labelledby="pool-title">
      <div class="board-head">
        <h1 id="pool-title">Contractor pool</h1>
      </div>
      <search class="filters filters-pool">
        <input
          type="search"
          class="filter-text"
          aria-label="Find contractors by name"
          placeholder="Find by name…"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <select
          aria-label="Contractor trade"
          value={trade}
          onChange={(e) => setTrade((e.target as HTMLSelectElement).value)}
        >
          <option value="">All trades</option>
          {TRADE_CODES.map((t) => (
            <option key={t} value={t}>
              {titleCase(t)}
            </option>
          ))}
        </select>
        <input
          aria-label="State (two letters)"
          placeholder="State, e.g. CA"
          maxLength={2}
          value={state}
          onInput={(e) => setState((e.target as HTMLInputElement).value)}
        />
        <select
          aria-label="Standing"
          value={standing}
          onChange={(e) => setStanding((e.target as HTMLSelectElement).value)}
        >
          <option value="">Any standing</option>
          <option value="active">Active</option>
          <option value="inactive">Inactive</option>
          <option value="excluded">Excluded</option>
        </select>
      </search>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {list === null ? (
        <p class="muted">Loading the pool…</p>
      ) : list.length === 0 ? (
        <p class="empty">No contractor matches.</p>
      ) : (
        <ul class="rows pool-rows">
          {list.map((c) => (
            <PoolRow
              key={c.contractor_id}
              contractor={c}
              open={open === c.contractor_id}
              onToggle={() => setOpen(open === c.contractor_id ? null : c.contractor_id)}
              onChanged={(status) => changed(c.contractor_id, status)}
            />
          ))}
        </ul>
      )}
      {cursor && (
        <button type="button" class="btn btn-quiet more" onClick={() => void more()}>
          Show more
        </button>
      )}
    </section>
  );
}

function Check({ label, state, until }: { label: string; state: Verification; until: string | null }) {
  return (
    <span class={`check check-${state}`} title={until ? `${label} until ${until}` : `${label} not verified`}>
      {label} {VERIFICATION_LABEL[state]}
      {until && state !== "verified" && state !== "not_verified" ? ` ${until}` : ""}
    </span>
  );
}

function PoolRow(props: {
  contractor: PoolContractor;
  open: boolean;
  onToggle: () => void;
  onChanged: (status: Standing) => void;
}) {
  const { contractor: c, open } = props;
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = async (action: Action) => {
    setBusy(true);
    setError(null);
    try {
      const r = await post<{ active: boolean; excluded: boolean }>("/api/dispatcher/v1/contractors/status", {
        contractor_id: c.contractor_id,
        action,
        reason: reason.trim(),
      });
      props.onChanged(r.excluded ? "excluded" : r.active ? "active" : "inactive");
      setReason("");
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The change did not go through.");
    } finally {
      setBusy(false);
    }
  };
  const reasonId = `pool-reason-${c.contractor_id}`;
  return (
    <li
      class={`row pool-row standing-${c.status}`}
      data-contractor-id={c.contractor_id}
      data-standing={c.status}
    >
      <button type="button" class="row-open pool-open" aria-expanded={open} onClick={props.onToggle}>
        <span class={`standing standing-badge-${c.status}`}>{titleCase(c.status)}</span>
        <span class="row-main">
          <span class="row-title">
            {c.name}
            <span class="row-place">{c.states.slice(0, 6).join(", ")}</span>
          </span>
          <span class="row-desc">
            {c.trades.map(titleCase).join(", ")} · ★ {c.rating.toFixed(1)}
            {c.ratings && <span class="pool-ratings"> · {aggregateLine(c.ratings)}</span>}
          </span>
          <span class="checks">
            <Check
              label="Insurance"
              state={c.verification.insurance}
              until={c.verification.insurance_verified_until}
            />
            <Check
              label="License"
              state={c.verification.license}
              until={c.verification.license_verified_until}
            />
          </span>
        </span>
        <span class="row-side">
          <span class={`cap ${c.capacity.free === 0 ? "cap-full" : ""}`}>
            {c.capacity.in_use}/{c.capacity.max_active_jobs} in use
          </span>
          <span class="muted">
            {plural(c.capacity.open_jobs, "job")} · {plural(c.capacity.pending_offers, "offer")}
          </span>
          <span class="row-id">{c.contractor_id}</span>
        </span>
      </button>
      {open && (
        <div class="pool-actions">
          <label for={reasonId}>Reason</label>
          <input
            id={reasonId}
            maxLength={1000}
            placeholder="Why (kept in the audit log)"
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <div class="pool-buttons">
            {c.status === "excluded" ? (
              <button
                type="button"
                class="btn btn-quiet"
                disabled={busy || !reason.trim()}
                onClick={() => void act("include")}
              >
                Include
              </button>
            ) : (
              <>
                {c.status === "active" ? (
                  <button
                    type="button"
                    class="btn btn-quiet"
                    disabled={busy || !reason.trim()}
                    onClick={() => void act("deactivate")}
                  >
                    Deactivate
                  </button>
                ) : (
                  <button
                    type="button"
                    class="btn btn-primary"
                    disabled={busy || !reason.trim()}
                    onClick={() => void act("activate")}
                  >
                    Activate
                  </button>
                )}
                <button
                  type="button"
                  class="btn btn-danger"
                  disabled={busy || !reason.trim()}
                  onClick={() => void act("exclude")}
                >
                  Exclude
                </button>
              </>
            )}
          </div>
        </div>
      )}
    </li>
  );
}
