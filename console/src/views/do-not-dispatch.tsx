// Do-not-dispatch (issue 33): the account's list of contractors kept off its work (dispatch.do_not_dispatch,
// _add from an order's contractor, _remove with a reason), the dispatch team's view of every account's
// entries (dispatcher.do_not_dispatch), and the exclusions of one account the board's picker marks.

import { useEffect, useState } from "preact/hooks";
import { TRADE_CODES } from "../../../src/domain/trades";
import { ApiProblem, get, post } from "../api";
import { titleCase } from "../format";
import type { Order } from "../types";

export interface DndEntry {
  entry_id: string;
  contractor_ref: string;
  trades: string[] | null;
  reason: string;
  created_at: string;
  created_by: "account" | "dispatcher";
  /** The dispatch team's view only. */
  account_id?: string;
  contractor_id?: string;
}

const tradesText = (trades: string[] | null) => (trades ? trades.map(titleCase).join(", ") : "Every trade");
const day = (iso: string) => new Date(iso).toLocaleDateString("en-US", { dateStyle: "medium" });
const problem = (err: unknown, fallback: string) => (err instanceof ApiProblem ? err.message : fallback);

/** The entry of `entries` that keeps `contractorId` off a job of `trade`, if any. */
export function exclusionOf(entries: DndEntry[], contractorId: string, trade: string): DndEntry | undefined {
  return entries.find(
    (e) => e.contractor_id === contractorId && (e.trades === null || e.trades.includes(trade)),
  );
}

/** The dispatch team's copy of one account's entries (for the board's picker); null while loading. */
export function useAccountExclusions(accountId: string | undefined): DndEntry[] | null {
  const [entries, setEntries] = useState<DndEntry[] | null>(null);
  useEffect(() => {
    let stale = false;
    setEntries(null);
    if (!accountId) {
      setEntries([]);
      return;
    }
    get<{ entries: DndEntry[] }>("/api/dispatcher/v1/do-not-dispatch", { account_id: accountId })
      .then((r) => !stale && setEntries(r.entries))
      // Without the list the picker still works: the service refuses an excluded contractor (409).
      .catch(() => !stale && setEntries([]));
    return () => {
      stale = true;
    };
  }, [accountId]);
  return entries;
}

/** The account's list: each entry with its trades and reason, removed with a reason. */
export function AccountDoNotDispatch() {
  const [entries, setEntries] = useState<DndEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<{ entries: DndEntry[] }>("/api/dispatch/v1/do-not-dispatch")
      .then((r) => setEntries(r.entries))
      .catch((err) => setError(problem(err, "Your list could not be loaded.")));
  }, []);
  return (
    <section class="dnd" aria-labelledby="dnd-title">
      <div class="board-head">
        <h1 id="dnd-title">Do not dispatch</h1>
      </div>
      <p class="muted">
        Contractors your work is never offered to (for every trade, or the ones listed). Add one from an order
        it did (its timeline, <strong>Do not dispatch</strong>); remove one here, with a reason.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {entries === null ? (
        !error && <p class="muted">Loading…</p>
      ) : entries.length === 0 ? (
        <p class="empty">Nobody is on your list.</p>
      ) : (
        <ul class="rows dnd-rows">
          {entries.map((e) => (
            <AccountEntry
              key={e.entry_id}
              entry={e}
              onRemoved={() => setEntries(entries.filter((x) => x.entry_id !== e.entry_id))}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function AccountEntry({ entry, onRemoved }: { entry: DndEntry; onRemoved: () => void }) {
  const [removing, setRemoving] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await post("/api/dispatch/v1/do-not-dispatch/remove", {
        entry_id: entry.entry_id,
        reason: reason.trim(),
      });
      onRemoved();
    } catch (err) {
      setError(problem(err, "The entry could not be removed."));
      setBusy(false);
    }
  };
  const reasonId = `dnd-remove-${entry.entry_id}`;
  return (
    <li class="row dnd-row" data-entry-id={entry.entry_id} data-contractor-ref={entry.contractor_ref}>
      <div class="row-open static">
        <span class="standing standing-badge-excluded">Excluded</span>
        <span class="row-main">
          <span class="row-title">
            {entry.contractor_ref}
            <span class="row-place">{tradesText(entry.trades)}</span>
          </span>
          <span class="row-desc">{entry.reason}</span>
        </span>
        <span class="row-side">
          <span class="muted">since {day(entry.created_at)}</span>
          {!removing && (
            <button type="button" class="btn btn-quiet btn-small" onClick={() => setRemoving(true)}>
              Remove
            </button>
          )}
        </span>
      </div>
      {removing && (
        <form class="panel dnd-remove" onSubmit={remove} aria-label={`Remove ${entry.contractor_ref}`}>
          <label for={reasonId}>Why remove it</label>
          <input
            id={reasonId}
            required
            maxLength={500}
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <button type="button" class="btn btn-quiet" onClick={() => setRemoving(false)}>
            Keep
          </button>{" "}
          <button type="submit" class="btn btn-primary" disabled={busy || !reason.trim()}>
            Remove from the list
          </button>
        </form>
      )}
    </li>
  );
}

/** From an order's detail: keep its contractor off the account's work (this trade, or every trade). */
export function ExcludeContractor({ order }: { order: Order }) {
  const [open, setOpen] = useState(false);
  const [scope, setScope] = useState<"trade" | "all">("trade");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<DndEntry | null>(null);
  const ref = order.contractor_ref;
  if (!ref) return null;
  if (added) {
    return (
      <p class="notice" role="status" data-entry-id={added.entry_id}>
        {ref} is on your do-not-dispatch list ({tradesText(added.trades)}): none of that work of yours is
        offered to it from now on.
      </p>
    );
  }
  if (!open) {
    return (
      <button type="button" class="btn btn-quiet btn-small" onClick={() => setOpen(true)}>
        Do not dispatch this contractor…
      </button>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setAdded(
        await post<DndEntry>("/api/dispatch/v1/do-not-dispatch", {
          contractor_ref: ref,
          ...(scope === "trade" ? { trades: [order.trade] } : {}),
          reason: reason.trim(),
        }),
      );
    } catch (err) {
      setError(problem(err, "The contractor could not be added to your list."));
      setBusy(false);
    }
  };
  const id = `dnd-${order.order_id}`;
  return (
    <form class="panel dnd-add" onSubmit={submit} aria-label="Do not dispatch this contractor">
      <h3>Do not dispatch {ref}</h3>
      <fieldset>
        <legend>For</legend>
        <label>
          <input
            type="radio"
            name={`${id}-scope`}
            checked={scope === "trade"}
            onChange={() => setScope("trade")}
          />{" "}
          {titleCase(order.trade)} work only
        </label>
        <label>
          <input
            type="radio"
            name={`${id}-scope`}
            checked={scope === "all"}
            onChange={() => setScope("all")}
          />{" "}
          Every trade
        </label>
      </fieldset>
      <label for={`${id}-reason`}>Reason</label>
      <input
        id={`${id}-reason`}
        required
        maxLength={500}
        placeholder="Why (kept in the audit log; the contractor is not shown it)"
        value={reason}
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="button" class="btn btn-quiet" onClick={() => setOpen(false)}>
        Cancel
      </button>{" "}
      <button type="submit" class="btn btn-primary" disabled={busy || !reason.trim()}>
        Add to my list
      </button>
    </form>
  );
}

/** The dispatch team's view: every account's entries, filtered by account and trade. */
export function DispatcherDoNotDispatch() {
  const [entries, setEntries] = useState<DndEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [account, setAccount] = useState("");
  const [trade, setTrade] = useState("");
  useEffect(() => {
    get<{ entries: DndEntry[] }>("/api/dispatcher/v1/do-not-dispatch")
      .then((r) => setEntries(r.entries))
      .catch((err) => setError(problem(err, "The lists could not be loaded.")));
  }, []);
  const shown = (entries ?? []).filter(
    (e) =>
      (!account.trim() || (e.account_id ?? "").includes(account.trim())) &&
      (!trade || e.trades === null || e.trades.includes(trade)),
  );
  return (
    <section class="dnd" aria-labelledby="dnd-title">
      <div class="board-head">
        <h1 id="dnd-title">Do not dispatch</h1>
        <div class="stats">
          <span class="stat">
            <strong>{entries?.length ?? 0}</strong> {entries?.length === 1 ? "entry" : "entries"}
          </span>
        </div>
      </div>
      <p class="muted">
        Each account's exclusions: its work is never offered to the contractor, and cannot be assigned to it.
        Only the account removes an entry.
      </p>
      <div class="filters">
        <input
          type="search"
          aria-label="Filter by account"
          placeholder="Account…"
          value={account}
          onInput={(e) => setAccount((e.target as HTMLInputElement).value)}
        />
        <select
          aria-label="Trade"
          value={trade}
          onChange={(e) => setTrade((e.target as HTMLSelectElement).value)}
        >
          <option value="">Every trade</option>
          {TRADE_CODES.map((t) => (
            <option key={t} value={t}>
              {titleCase(t)}
            </option>
          ))}
        </select>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {entries === null ? (
        !error && <p class="muted">Loading…</p>
      ) : shown.length === 0 ? (
        <p class="empty">No entry.</p>
      ) : (
        <table class="dnd-table">
          <caption class="sr-only">Do-not-dispatch entries</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Contractor</th>
              <th scope="col">Trades</th>
              <th scope="col">Reason</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr key={e.entry_id} data-entry-id={e.entry_id} data-contractor-id={e.contractor_id}>
                <td>{e.account_id}</td>
                <td>{e.contractor_id}</td>
                <td>{tradesText(e.trades)}</td>
                <td>{e.reason}</td>
                <td>{day(e.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
