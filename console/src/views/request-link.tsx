// On a site's detail in the account's Sites view: its request link (the public form where the site's people
// report what is wrong, docs/customer-side.md "Request form"): get it (issued on first use), copy or open
// it, its QR code shown and downloadable (SVG) to print, and rotate it. Through the same operations as the
// API: dispatch.request_link, dispatch.request_link_qr (same-origin GET with the session cookie: the CSP's
// img-src 'self' lets it show), dispatch.request_link_rotate.

import { useState } from "preact/hooks";
import { ApiProblem, post } from "../api";

interface RequestLink {
  link_id: string;
  site_id: string;
  url: string;
  qr_svg_url: string;
  created_at: string;
}

const problem = (err: unknown, fallback: string) => (err instanceof ApiProblem ? err.message : fallback);

/** The QR code's address on this origin (the service names it with its base URL; the console's CSP allows
 * images from its own origin), with the link's id so a rotated link's code is fetched anew. */
function qrSrc(link: RequestLink): string {
  const path = new URL(link.qr_svg_url, location.href).pathname;
  return `${path}?v=${encodeURIComponent(link.link_id)}`;
}

export function RequestLinkPanel({ siteId, siteName }: { siteId: string; siteName: string }) {
  const [link, setLink] = useState<RequestLink | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [rotated, setRotated] = useState(false);
  /** Runs an action; false when it failed (its error shown). */
  const act = async (run: () => Promise<void>, fallback: string): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await run();
      return true;
    } catch (err) {
      setError(problem(err, fallback));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const show = () =>
    act(async () => {
      setLink(await post<RequestLink>("/api/dispatch/v1/request-links", { site_id: siteId }));
    }, "The request link could not be read.");
  const rotate = (reason: string) =>
    act(async () => {
      setLink(
        await post<RequestLink>("/api/dispatch/v1/request-links/rotate", {
          site_id: siteId,
          ...(reason ? { reason } : {}),
        }),
      );
      setRotated(true);
    }, "The request link could not be rotated.");
  return (
    <section class="request-link" aria-label="Request link" data-link-id={link?.link_id ?? ""}>
      <h3>Request link</h3>
      <p class="muted">
        A public form where the people at this site report what is wrong, with no key. Print its QR code and
        post it in the back office; each report shows in Requests.
      </p>
      {link === null ? (
        <button type="button" class="btn btn-small" disabled={busy} onClick={show}>
          Show the request link
        </button>
      ) : (
        <LinkShown link={link} siteName={siteName} busy={busy} rotated={rotated} rotate={rotate} />
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function LinkShown(props: {
  link: RequestLink;
  siteName: string;
  busy: boolean;
  rotated: boolean;
  rotate: (reason: string) => Promise<boolean>;
}) {
  const { link } = props;
  const [copied, setCopied] = useState(false);
  const [rotating, setRotating] = useState(false);
  const fieldId = `rl-${link.link_id}`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link.url);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a denied permission): the field is selected to copy by hand.
      (document.getElementById(fieldId) as HTMLInputElement | null)?.select();
    }
  };
  return (
    <>
      {props.rotated && (
        <p class="notice" role="status">
          Rotated: the old link and every code printed from it answer “not found”. Print this one.
        </p>
      )}
      <div class="tracking-url">
        <input
          id={fieldId}
          class="tracking-url-field"
          readOnly
          aria-label="Request link address"
          value={link.url}
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
        <button type="button" class="btn btn-small" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        <a
          class="btn btn-quiet btn-small request-link-a"
          href={link.url}
          target="_blank"
          rel="noopener noreferrer"
        >
          Open
        </a>
      </div>
      <div class="request-qr">
        <img
          class="request-qr-img"
          src={qrSrc(link)}
          width={160}
          height={160}
          alt={`QR code of the request link of ${props.siteName}`}
        />
        <div class="request-qr-actions">
          <a
            class="btn btn-small request-link-a"
            href={qrSrc(link)}
            download={`request-link-${link.site_id}.svg`}
          >
            Download QR (SVG)
          </a>
          {!rotating && (
            <button type="button" class="btn btn-quiet btn-small" onClick={() => setRotating(true)}>
              Rotate…
            </button>
          )}
        </div>
      </div>
      {rotating && (
        <RotateForm link={link} busy={props.busy} rotate={props.rotate} onCancel={() => setRotating(false)} />
      )}
    </>
  );
}

function RotateForm(props: {
  link: RequestLink;
  busy: boolean;
  onCancel: () => void;
  rotate: (reason: string) => Promise<boolean>;
}) {
  const [reason, setReason] = useState("");
  const id = `rlr-${props.link.link_id}`;
  return (
    <form
      class="request-rotate"
      aria-label="Rotate the request link"
      onSubmit={(e) => {
        e.preventDefault();
        void props.rotate(reason.trim()).then((done) => done && props.onCancel());
      }}
    >
      <p class="request-rotate-warning">
        A new link and QR code replace this one. The old link, and every code printed from it, stop working at
        once: reprint and repost the new one.
      </p>
      <label class="tracking-revoke-label" for={id}>
        Reason (optional, kept in the audit log)
      </label>
      <input
        id={id}
        class="tracking-revoke-field"
        maxLength={500}
        placeholder="e.g. the code was posted publicly"
        value={reason}
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      <div class="request-rotate-actions">
        <button type="button" class="btn btn-quiet btn-small" onClick={props.onCancel}>
          Keep it
        </button>
        <button type="submit" class="btn btn-danger btn-small" disabled={props.busy}>
          Rotate now
        </button>
      </div>
    </form>
  );
}
