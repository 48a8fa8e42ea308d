// The account's webhooks (the dispatch.webhooks_* operations): its default endpoint (set, clear, enable
// again after it was disabled), its signing secrets (rotate: the new secret is shown this once), and the
// delivery log with each delivery's attempts, to redeliver one that failed.

import { useEffect, useRef, useState } from "preact/hooks";
import { ApiProblem, get, post } from "../api";
import { ago, minute } from "../format";

interface Endpoint {
  endpoint_id: string;
  url: string;
  is_default: boolean;
  status: "enabled" | "disabled";
  disabled_reason: string | null;
}

interface SecretInfo {
  secret_id: string;
  created_at: string;
  expires_at: string | null;
}

interface Delivery {
  delivery_id: string;
  event_type: string;
  order_id: string;
  url: string;
  status: "pending" | "succeeded" | "failed" | "cancelled";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
}

const problem = (err: unknown, fallback: string) => (err instanceof ApiProblem ? err.message : fallback);

/** Runs one change (`work`), then loads the settings again; says why when it fails. */
type Run = (work: () => Promise<void>, fallback: string) => Promise<void>;

/** The account's endpoints, secrets and deliveries, loaded on mount, and `run` for the changes. */
function useWebhookSettings() {
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [secrets, setSecrets] = useState<SecretInfo[]>([]);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [url, setUrl] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Whether the URL field holds what the user typed (a load must not overwrite it). */
  const edited = useRef(false);

  const load = async () => {
    try {
      const [config, log] = await Promise.all([
        get<{ endpoints: Endpoint[]; secrets: SecretInfo[] }>("/api/dispatch/v1/webhooks"),
        get<{ deliveries: Delivery[] }>("/api/dispatch/v1/webhooks/deliveries", { limit: 50 }),
      ]);
      setEndpoints(config.endpoints);
      setSecrets(config.secrets);
      setDeliveries(log.deliveries);
      if (!edited.current) setUrl(config.endpoints.find((e) => e.is_default)?.url ?? "");
    } catch (err) {
      setError(problem(err, "The webhook settings could not be loaded."));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const run: Run = async (work, fallback) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      await load();
    } catch (err) {
      setError(problem(err, fallback));
    } finally {
      setBusy(false);
    }
  };

  const editUrl = (value: string) => {
    edited.current = true;
    setUrl(value);
  };
  const saveUrl = () =>
    run(async () => {
      await post("/api/dispatch/v1/webhooks/endpoint", { url: url.trim() || null });
      edited.current = false;
    }, "The endpoint could not be saved.");

  const current = endpoints?.find((e) => e.is_default) ?? null;
  return { current, secrets, deliveries, url, editUrl, saveUrl, error, busy, run };
}

export function Webhooks() {
  const { current, secrets, deliveries, url, editUrl, saveUrl, error, busy, run } = useWebhookSettings();
  return (
    <section class="webhooks" aria-labelledby="webhooks-title">
      <div class="board-head">
        <h1 id="webhooks-title">Webhooks</h1>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="cards-2">
        <EndpointCard url={url} onEdit={editUrl} onSave={saveUrl} current={current} busy={busy} run={run} />
        <SecretCard secrets={secrets} busy={busy} run={run} />
      </div>
      <h2 class="section-title">Deliveries</h2>
      <DeliveryList deliveries={deliveries} busy={busy} run={run} />
    </section>
  );
}

/** The default endpoint's URL (set or cleared), its state, and Enable once it was disabled. */
function EndpointCard(props: {
  url: string;
  onEdit: (url: string) => void;
  onSave: () => Promise<void>;
  current: Endpoint | null;
  busy: boolean;
  run: Run;
}) {
  const { current, busy, run } = props;
  return (
    <form
      class="card panel-card"
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSave();
      }}
    >
      <h2>Endpoint</h2>
      <p class="hint">Every change of your orders is sent here, signed (Standard Webhooks).</p>
      <label for="webhook-url">Endpoint URL</label>
      <input
        id="webhook-url"
        type="url"
        placeholder="https://hooks.example.com/field-dispatch"
        value={props.url}
        onInput={(e) => props.onEdit((e.target as HTMLInputElement).value)}
      />
      {current && (
        <p class={current.status === "enabled" ? "muted" : "error"}>
          {current.status === "enabled"
            ? "Enabled."
            : `Disabled: ${current.disabled_reason ?? "no reason given"}.`}
        </p>
      )}
      <div class="pool-buttons">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          Save endpoint
        </button>
        {current?.status === "disabled" && (
          <button
            type="button"
            class="btn btn-quiet"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                await post("/api/dispatch/v1/webhooks/endpoint/enable", { endpoint_id: current.endpoint_id });
              }, "The endpoint could not be enabled.")
            }
          >
            Enable
          </button>
        )}
      </div>
    </form>
  );
}

/** The signing secrets, Rotate, and a new secret shown this once. */
function SecretCard({ secrets, busy, run }: { secrets: SecretInfo[]; busy: boolean; run: Run }) {
  const [shown, setShown] = useState<string | null>(null);
  return (
    <div class="card panel-card">
      <h2>Signing secret</h2>
      <p class="hint">Rotating keeps the previous secret signing for 24 hours, so receivers can switch.</p>
      {secrets.length === 0 ? (
        <p class="muted">No secret yet: rotate to create one.</p>
      ) : (
        <ul class="secret-list">
          {secrets.map((s) => (
            <li key={s.secret_id}>
              <span class="row-id">{s.secret_id}</span>{" "}
              <span class="muted">
                {s.expires_at ? `signs until ${new Date(s.expires_at).toLocaleString("en-US")}` : "current"}
              </span>
            </li>
          ))}
        </ul>
      )}
      {shown && (
        <div class="shown-once" role="status">
          <p>
            <strong>Your new secret, shown this once.</strong> Store it now.
          </p>
          <code class="secret">{shown}</code>
          <button type="button" class="btn btn-quiet" onClick={() => setShown(null)}>
            Done
          </button>
        </div>
      )}
      <button
        type="button"
        class="btn btn-primary"
        disabled={busy}
        onClick={() =>
          void run(async () => {
            const r = await post<{ secret: string }>("/api/dispatch/v1/webhooks/secret", {});
            setShown(r.secret);
          }, "The secret could not be rotated.")
        }
      >
        Rotate secret
      </button>
    </div>
  );
}

/** The delivery log, each with its attempts, and Redeliver for a finished one. */
function DeliveryList({ deliveries, busy, run }: { deliveries: Delivery[]; busy: boolean; run: Run }) {
  const at = minute.value;
  return deliveries.length === 0 ? (
    <p class="empty">No deliveries yet.</p>
  ) : (
    <ul class="rows">
      {deliveries.map((d) => (
        <li
          key={d.delivery_id}
          class={`row delivery delivery-${d.status}`}
          data-delivery-id={d.delivery_id}
          data-status={d.status}
        >
          <div class="row-open static">
            <span class={`standing delivery-badge-${d.status}`}>{d.status}</span>
            <span class="row-main">
              <span class="row-title">
                {d.event_type}
                <span class="row-place">{d.order_id}</span>
              </span>
              <span class="row-desc">
                {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
                {d.last_status_code !== null && ` · last answer ${d.last_status_code}`}
                {d.last_error && ` · ${d.last_error}`}
              </span>
            </span>
            <span class="row-side">
              <span class="muted">{ago(d.created_at, at)}</span>
              {(d.status === "failed" || d.status === "cancelled" || d.status === "succeeded") && (
                <button
                  type="button"
                  class="btn btn-quiet"
                  disabled={busy}
                  onClick={() =>
                    void run(async () => {
                      await post("/api/dispatch/v1/webhooks/redeliver", { delivery_id: d.delivery_id });
                    }, "The delivery could not be sent again.")
                  }
                >
                  Redeliver
                </button>
              )}
            </span>
          </div>
        </li>
      ))}
    </ul>
  );
}
