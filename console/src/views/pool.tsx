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

type SortKey = "name" | "status" | "trades" | "rating" | "in_use" | "open_jobs";

/** The table's sortable columns, each with its first direction (numbers: the largest first). */
const COLUMNS: Array<{ key: SortKey; label: string; desc: boolean }> = [
  { key: "name", label: "Name", desc: false },
  { key: "status", label: "Standing", desc: false },
  { key: "trades", label: "Trades and states", desc: false },
  { key: "rating", label: "Rating", desc: true },
  { key: "in_use", label: "In use", desc: true },
  { key: "open_jobs", label: "Open work", desc: true },
];

const SORT_VALUE: Record<SortKey, (c: PoolContractor) => string | number> = {
  name: (c) => c.name.toLowerCase(),
  status: (c) => c.status,
  trades: (c) => c.trades.join(","),
  rating: (c) => c.rating,
  in_use: (c) => c.capacity.in_use / Math.max(1, c.capacity.max_active_jobs),
  open_jobs: (c) => c.capacity.open_jobs + c.capacity.pending_offers,
};

/** The contractors loaded, sorted by a column (equals by name, A to Z). */
function sorted(list: PoolContractor[], sort: { key: SortKey; desc: boolean }): PoolContractor[] {
  const value = SORT_VALUE[sort.key];
  return [...list].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const cmp = va < vb ? -1 : va > vb ? 1 : 0;
    return (sort.desc ? -cmp : cmp) || a.name.localeCompare(b.name);
  });
}

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
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);

  const query = (after?: string) =>
    get<{ contractors: PoolContractor[]; total: number; next_cursor: string | null }>(
      "/api/dispatcher/v1/contractors",
      {
        name: name.trim() || undefined,
        trade: trade || undefined,
        state: state.trim().toUpperCase() || undefined,
        status: standing || undefined,
        limit: 50,
        cursor: after,
      },
    );

  useEffect(() => {
    let stale = false;
    const timer = setTimeout(async () => {
      try {
        const page = await query();
        if (stale) return;
        setList(page.contractors);
        setCursor(page.next_cursor);
        setTotal(page.total);
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

  return { list, cursor, total, error, more, changed };
}

export function Pool() {
  const [name, setName] = useState("");
  const [trade, setTrade] = useState("");
  const [state, setState] = useState("");
  const [standing, setStanding] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const { list, cursor, total, error, more, changed } = usePoolPages({ name, trade, state, standing });
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: "name", desc: false });

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
        <>
          <p class="muted pool-count" data-total={total}>
            Showing {list.length} of {total.toLocaleString("en-US")} contractors
            {list.length < total ? " (sorting orders those shown)" : ""}.
          </p>
          <table class="pool-table">
            <caption class="sr-only">Contractors of the pool, {total} in all</caption>
            <thead class="pool-head">
              <tr>
                {COLUMNS.map((col) => (
                  <th
                    key={col.key}
                    scope="col"
                    aria-sort={sort.key === col.key ? (sort.desc ? "descending" : "ascending") : undefined}
                  >
                    <button
                      type="button"
                      class="th-sort"
                      onClick={() =>
                        setSort({ key: col.key, desc: sort.key === col.key ? !sort.desc : col.desc })
                      }
                    >
                      {col.label}
                      <span aria-hidden="true">{sort.key === col.key ? (sort.desc ? " ▼" : " ▲") : ""}</span>
                    </button>
                  </th>
                ))}
                <th scope="col">Checks</th>
              </tr>
            </thead>
            {sorted(list, sort).map((c) => (
              <PoolRow
                key={c.contractor_id}
                contractor={c}
                open={open === c.contractor_id}
                onToggle={() => setOpen(open === c.contractor_id ? null : c.contractor_id)}
                onChanged={(status) => changed(c.contractor_id, status)}
              />
            ))}
          </table>
        </>
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
    <tbody
      class={`pool-row standing-${c.status} ${open ? "open" : ""}`}
      data-contractor-id={c.contractor_id}
      data-standing={c.status}
    >
      <tr>
        <th scope="row">
          <button type="button" class="pool-open" aria-expanded={open} onClick={props.onToggle}>
            {c.name}
          </button>
          <span class="row-id">{c.contractor_id}</span>
        </th>
        <td>
          <span class={`standing standing-badge-${c.status}`}>{titleCase(c.status)}</span>
        </td>
        <td class="pool-trades">
          {c.trades.map(titleCase).join(", ")}
          <span class="pool-states">{c.states.slice(0, 6).join(", ")}</span>
        </td>
        <td class="num">
          ★ {c.rating.toFixed(1)}
          {c.ratings && <span class="pool-ratings"> · {aggregateLine(c.ratings)}</span>}
        </td>
        <td class="num">
          <span class={`cap ${c.capacity.free === 0 ? "cap-full" : ""}`}>
            {c.capacity.in_use}/{c.capacity.max_active_jobs}
          </span>
        </td>
        <td class="num">
          {plural(c.capacity.open_jobs, "job")} · {plural(c.capacity.pending_offers, "offer")}
        </td>
        <td>
          <div class="checks">
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
          </div>
        </td>
      </tr>
      {open && (
        <tr class="pool-actions-row">
          <td colSpan={7}>
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
          </td>
        </tr>
      )}
    </tbody>
  );
}
