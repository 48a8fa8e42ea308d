// From an order's detail in the account's view: its tracking link for the people at the site (a public
// page of the job's progress, docs/customer-side.md): issue it, copy or open it, revoke it. Through the
// same operations as the API: dispatch.tracking_links, dispatch.tracking_link, dispatch.tracking_link_revoke.

import { useEffect, useState } from "preact/hooks";
import { ApiProblem, get, post } from "../api";
import type { Order } from "../types";

interface TrackingLink {
  link_id: string;
  order_id: string;
  state: "active" | "expired" | "revoked";
  url: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

const problem = (err: unknown, fallback: string) => (err instanceof ApiProblem ? err.message : fallback);
const when = (iso: string) =>
  new Date(iso).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });

/** The order's link in force (active or expired, never revoked), undefined while it loads. */
function useLink(orderId: string) {
  const [link, setLink] = useState<TrackingLink | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<{ links: TrackingLink[] }>(`/api/dispatch/v1/orders/${encodeURIComponent(orderId)}/tracking-links`)
      .then((r) => setLink(r.links.find((l) => l.state !== "revoked") ?? null))
      .catch((err) => setError(problem(err, "The order's tracking link could not be read.")));
  }, [orderId]);
  return { link, setLink, error, setError };
}

export function TrackingLinkPanel({ order }: { order: Order }) {
  const { link, setLink, error, setError } = useLink(order.order_id);
  const [busy, setBusy] = useState(false);
  const [revoking, setRevoking] = useState(false);
  const [revoked, setRevoked] = useState(false);
  const act = async (run: () => Promise<void>, fallback: string) => {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(problem(err, fallback));
    } finally {
      setBusy(false);
    }
  };
  const issue = () =>
    act(async () => {
      setLink(await post<TrackingLink>("/api/dispatch/v1/tracking-links", { order_id: order.order_id }));
      setRevoked(false);
    }, "The tracking link could not be issued.");
  const revoke = (reason: string) =>
    act(async () => {
      await post<TrackingLink>("/api/dispatch/v1/tracking-links/revoke", {
        order_id: order.order_id,
        ...(reason ? { reason } : {}),
      });
      setLink(null);
      setRevoking(false);
      setRevoked(true);
    }, "The tracking link could not be revoked.");
  return (
    <section class="tracking-link" aria-label="Tracking link" data-link-state={link?.state ?? "none"}>
      <h3>Tracking link</h3>
      {link === undefined && !error && <p class="muted">Loading…</p>}
      {link === null && (
        <>
          <p class="muted">
            {revoked
              ? "Revoked: the page answers “not found” from now on. A new link has another address."
              : "A public page of this job's progress for the people at the site: status, arrival window or live ETA, the technician's first name. No key, no prices, nothing of your account."}
          </p>
          <button type="button" class="btn btn-small" disabled={busy} onClick={issue}>
            {revoked ? "Issue a new tracking link" : "Share a tracking link"}
          </button>
        </>
      )}
      {link && (
        <LinkShown link={link} busy={busy} revoking={revoking} setRevoking={setRevoking} revoke={revoke} />
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function LinkShown({
  link,
  busy,
  revoking,
  setRevoking,
  revoke,
}: {
  link: TrackingLink;
  busy: boolean;
  revoking: boolean;
  setRevoking: (on: boolean) => void;
  revoke: (reason: string) => Promise<void>;
}) {
  const [copied, setCopied] = useState(false);
  const [reason, setReason] = useState("");
  const url = link.url ?? "";
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a denied permission): the field is selected to copy by hand.
      (document.getElementById(`tl-${link.link_id}`) as HTMLInputElement | null)?.select();
    }
  };
  return (
    <>
      <p class="muted">
        {link.state === "expired"
          ? `Expired ${when(link.expires_at as string)}: the page no longer opens.`
          : link.expires_at
            ? `Send it to whoever waits at the site: it opens the job's page until ${when(link.expires_at)}.`
            : "Send it to whoever waits at the site: it opens the job's live page while the order is open, and 7 days after it closes."}
      </p>
      <div class="tracking-url">
        <input
          id={`tl-${link.link_id}`}
          class="tracking-url-field"
          readOnly
          aria-label="Tracking link address"
          value={url}
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
        <button type="button" class="btn btn-small" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        <a class="btn btn-quiet btn-small tracking-open" href={url} target="_blank" rel="noopener noreferrer">
          Open
        </a>
        {!revoking && (
          <button type="button" class="btn btn-quiet btn-small" onClick={() => setRevoking(true)}>
            Revoke…
          </button>
        )}
      </div>
      {revoking && (
        <form
          class="tracking-revoke"
          onSubmit={(e) => {
            e.preventDefault();
            void revoke(reason.trim());
          }}
        >
          <label class="tracking-revoke-label" for={`tlr-${link.link_id}`}>
            Reason (kept in the audit log)
          </label>
          <input
            id={`tlr-${link.link_id}`}
            class="tracking-revoke-field"
            maxLength={500}
            placeholder="e.g. sent to the wrong contact"
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="btn btn-quiet btn-small" onClick={() => setRevoking(false)}>
            Keep it
          </button>{" "}
          <button type="submit" class="btn btn-primary btn-small" disabled={busy}>
            Revoke now
          </button>
        </form>
      )}
    </>
  );
}
