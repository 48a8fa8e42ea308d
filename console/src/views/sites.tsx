// The account's sites (issue 34): a compact table of its locations (dispatch.sites) with each one's
// number of assets (dispatch.assets) and active plans (dispatch.plans), a text filter; a site selected
// shows its details, its assets with their warranty, and per asset its service history
// (dispatch.asset_history): the orders that named it, with status, date, cost and proof; and its request
// link (request-link.tsx: the public form, its QR code to print).

import { signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { ApiProblem, allPages, get, post } from "../api";
import { money, STATUS_LABEL, titleCase } from "../format";
import type { OrderStatus } from "../types";
import { RequestLinkPanel } from "./request-link";
import { StatusPill } from "./status";

export interface Site {
  site_id: string;
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  time_zone: string;
  hours: string;
  access_notes: string | null;
  contact: { name: string | null; phone: string | null; email: string | null } | null;
  archived_at: string | null;
}

interface Asset {
  asset_id: string;
  site_id: string;
  trade: string;
  type: string;
  make: string | null;
  model: string | null;
  serial: string | null;
  installed_on: string | null;
  warranty_ends_on: string | null;
  warranty_in_force: boolean;
}

interface HistoryEntry {
  order_id: string;
  status: OrderStatus;
  trade: string;
  description: string;
  created_at: string;
  completed_at: string | null;
  final_cost_cents: number | null;
  invoice_cents: number | null;
  attachment_ids: string[];
  report_url: string | null;
}

/** The plan fields the sites' table counts by. */
interface PlanLite {
  plan_id: string;
  site_id: string;
  status: "active" | "archived";
}

/** Sites whose assets are counted in the table (one read each). */
const COUNTED_SITES = 60;

const sites = signal<Site[]>([]);
const assetCounts = signal<Map<string, number>>(new Map());
const planCounts = signal<Map<string, number>>(new Map());
const loading = signal(true);
const loadError = signal<string | null>(null);
const selected = signal<string | null>(null);

/** An asset type in words ("rtu" reads "Rooftop unit (RTU)", "ev_charger" "EV charger"). */
const TYPE_WORDS: Record<string, string> = {
  rtu: "Rooftop unit (RTU)",
  ev_charger: "EV charger",
  ups: "UPS",
};
function typeWords(type: string): string {
  return TYPE_WORDS[type] ?? titleCase(type);
}

/** "2026-03-14" as "Mar 14, 2026" (a date, no zone). */
function day(date: string | null): string {
  if (!date) return "—";
  return new Date(`${date}T12:00:00Z`).toLocaleDateString("en-US", {
    month: "short",
    day: "numeric",
    year: "numeric",
    timeZone: "UTC",
  });
}

async function load() {
  loading.value = true;
  loadError.value = null;
  try {
    const [list, plans] = await Promise.all([
      allPages<Site, "sites">("/api/dispatch/v1/sites", "sites", { limit: 100 }),
      allPages<PlanLite, "plans">("/api/dispatch/v1/plans", "plans", { limit: 100 }),
    ]);
    sites.value = list;
    const byPlan = new Map<string, number>();
    for (const p of plans) if (p.status === "active") byPlan.set(p.site_id, (byPlan.get(p.site_id) ?? 0) + 1);
    planCounts.value = byPlan;
    const counts = new Map<string, number>();
    for (const s of list.slice(0, COUNTED_SITES)) {
      const { assets } = await get<{ assets: Asset[] }>(`/api/dispatch/v1/sites/${s.site_id}/assets`);
      counts.set(s.site_id, assets.length);
      assetCounts.value = new Map(counts);
    }
  } catch (err) {
    loadError.value = err instanceof ApiProblem ? err.message : "Your sites could not be loaded.";
  } finally {
    loading.value = false;
  }
}

function matches(s: Site, text: string): boolean {
  if (!text) return true;
  return [s.name, s.address, s.city, s.state, s.zip].join(" ").toLowerCase().includes(text);
}

export function SitesView(props: { onOpenOrder: (orderId: string) => void }) {
  const [filter, setFilter] = useState("");
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    void load();
    return () => {
      selected.value = null;
    };
  }, []);
  const text = filter.trim().toLowerCase();
  const list = sites.value.filter((s) => matches(s, text));
  const open = sites.value.find((s) => s.site_id === selected.value) ?? null;
  return (
    <section class="sites" aria-labelledby="sites-title">
      <div class="board-head">
        <h1 id="sites-title">Sites</h1>
        <div class="stats">
          <span class="stat">
            <strong>{sites.value.length}</strong> {sites.value.length === 1 ? "site" : "sites"}
          </span>
          <button
            type="button"
            class="btn btn-quiet btn-small"
            aria-expanded={adding}
            onClick={() => setAdding(!adding)}
          >
            Add site
          </button>
        </div>
      </div>
      {adding && (
        <AddSite
          onAdded={(site) => {
            sites.value = [...sites.value, site];
            assetCounts.value = new Map(assetCounts.value).set(site.site_id, 0);
            selected.value = site.site_id;
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      <search class="filters filters-sites">
        <input
          type="search"
          aria-label="Filter sites by name, address or city"
          placeholder="Filter by name, address, city"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
      </search>
      {loadError.value && (
        <p class="error" role="alert">
          {loadError.value}
        </p>
      )}
      {list.length === 0 ? (
        <p class="empty">
          {loading.value
            ? "Loading…"
            : sites.value.length === 0
              ? "No sites yet. Sites you create or import through the API show here."
              : "No site matches the filter."}
        </p>
      ) : (
        <div class="table-wrap card">
          <table class="data-table sites-table">
            <thead>
              <tr>
                <th scope="col">Site</th>
                <th scope="col">City</th>
                <th scope="col">Time zone</th>
                <th scope="col">Open hours</th>
                <th scope="col" class="num">
                  Assets
                </th>
                <th scope="col" class="num">
                  Active plans
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr
                  key={s.site_id}
                  data-site-id={s.site_id}
                  class={selected.value === s.site_id ? "row-selected" : ""}
                >
                  <th scope="row">
                    <button
                      type="button"
                      class="link-button"
                      aria-expanded={selected.value === s.site_id}
                      onClick={() => {
                        selected.value = selected.value === s.site_id ? null : s.site_id;
                      }}
                    >
                      {s.name}
                    </button>
                    {s.archived_at && <span class="ref">archived</span>}
                  </th>
                  <td>
                    {s.city}, {s.state}
                  </td>
                  <td>{s.time_zone}</td>
                  <td>{s.hours || "Any time"}</td>
                  <td class="num">{assetCounts.value.get(s.site_id) ?? "—"}</td>
                  <td class="num">{planCounts.value.get(s.site_id) ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <SiteDetail key={open.site_id} site={open} onOpenOrder={props.onOpenOrder} />}
    </section>
  );
}

function SiteDetail({ site, onOpenOrder }: { site: Site; onOpenOrder: (orderId: string) => void }) {
  const [assets, setAssets] = useState<Asset[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<{ assets: Asset[] }>(`/api/dispatch/v1/sites/${site.site_id}`).then(
      (s) => setAssets(s.assets),
      (err) => setError(err instanceof ApiProblem ? err.message : "The site's assets could not be loaded."),
    );
  }, [site.site_id]);
  const contact = site.contact;
  return (
    <section class="card site-detail" aria-labelledby="site-detail-title" data-site-id={site.site_id}>
      <h2 id="site-detail-title">{site.name}</h2>
      <dl class="site-facts">
        <dt>Address</dt>
        <dd>
          {site.address}, {site.city}, {site.state} {site.zip}
        </dd>
        <dt>Hours</dt>
        <dd>
          {site.hours || "Any time"} <span class="muted">({site.time_zone})</span>
        </dd>
        <dt>Access</dt>
        <dd>{site.access_notes ?? "—"}</dd>
        <dt>Contact</dt>
        <dd>
          {contact && (contact.name || contact.phone || contact.email)
            ? [contact.name, contact.phone, contact.email].filter(Boolean).join(" · ")
            : "—"}
        </dd>
      </dl>
      {site.archived_at === null && <RequestLinkPanel siteId={site.site_id} siteName={site.name} />}
      <h3>Assets</h3>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {assets === null ? (
        !error && <p class="muted">Loading…</p>
      ) : assets.length === 0 ? (
        <p class="empty">No assets at this site.</p>
      ) : (
        <ul class="asset-list">
          {assets.map((a) => (
            <AssetRow key={a.asset_id} asset={a} onOpenOrder={onOpenOrder} />
          ))}
        </ul>
      )}
    </section>
  );
}

function AssetRow({ asset, onOpenOrder }: { asset: Asset; onOpenOrder: (orderId: string) => void }) {
  const [open, setOpen] = useState(false);
  const makeModel = [asset.make, asset.model].filter(Boolean).join(" ") || "—";
  return (
    <li class="asset" data-asset-id={asset.asset_id}>
      <div class="asset-line">
        <span class="asset-type">
          <strong>{typeWords(asset.type)}</strong> <span class="muted">{titleCase(asset.trade)}</span>
        </span>
        <span>{makeModel}</span>
        <span>
          <span class="muted">Serial</span> {asset.serial ?? "—"}
        </span>
        <span>
          <span class="muted">Installed</span> {day(asset.installed_on)}
        </span>
        <span>
          <span class="muted">Warranty to</span> {day(asset.warranty_ends_on)}{" "}
          {asset.warranty_ends_on && (
            <span
              class={`badge ${asset.warranty_in_force ? "badge-ok" : "badge-off"}`}
              data-warranty={asset.warranty_in_force ? "in" : "expired"}
            >
              {asset.warranty_in_force ? "In warranty" : "Expired"}
            </span>
          )}
        </span>
        <button
          type="button"
          class="btn btn-quiet btn-small asset-history-toggle"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          Service history
        </button>
      </div>
      {open && <AssetHistory assetId={asset.asset_id} onOpenOrder={onOpenOrder} />}
    </li>
  );
}

function AssetHistory({ assetId, onOpenOrder }: { assetId: string; onOpenOrder: (orderId: string) => void }) {
  const [orders, setOrders] = useState<HistoryEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<{ orders: HistoryEntry[] }>(`/api/dispatch/v1/assets/${assetId}/history`).then(
      (h) => setOrders(h.orders),
      (err) => setError(err instanceof ApiProblem ? err.message : "The history could not be loaded."),
    );
  }, [assetId]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (orders === null) return <p class="muted">Loading…</p>;
  if (orders.length === 0) return <p class="muted asset-history">No order has named this asset yet.</p>;
  return (
    <table class="data-table asset-history">
      <caption class="sr-only">Service history</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Date</th>
          <th scope="col">Work</th>
          <th scope="col" class="num">
            Cost
          </th>
          <th scope="col">Order and proof</th>
        </tr>
      </thead>
      <tbody>
        {orders.map((o) => (
          <tr key={o.order_id} data-order-id={o.order_id}>
            <td>
              <StatusPill status={o.status} />
            </td>
            <td>{day((o.completed_at ?? o.created_at).slice(0, 10))}</td>
            <td class="history-desc" title={o.description}>
              {o.description}
            </td>
            <td class="num">
              {o.final_cost_cents !== null
                ? money(o.final_cost_cents)
                : o.invoice_cents !== null
                  ? money(o.invoice_cents)
                  : "—"}
            </td>
            <td>
              <button
                type="button"
                class="link-button"
                aria-label={`Open order ${o.order_id} (${STATUS_LABEL[o.status]})`}
                onClick={() => onOpenOrder(o.order_id)}
              >
                {o.order_id}
              </button>
              {o.report_url && (
                <>
                  {" · "}
                  <a href={o.report_url} target="_blank" rel="noreferrer">
                    Service report
                  </a>
                </>
              )}
              {o.attachment_ids.length > 0 && (
                <span class="muted">
                  {" · "}
                  {o.attachment_ids.length} {o.attachment_ids.length === 1 ? "attachment" : "attachments"}
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const SITE_FIELDS = [
  ["name", "Name", "Store #42"],
  ["address", "Address", "500 Congress Ave"],
  ["city", "City", "Austin"],
  ["state", "State", "TX"],
  ["zip", "ZIP", "78701"],
  ["hours", "Opening hours (optional)", "mon-sat 07:00-21:00"],
] as const;
type SiteField = (typeof SITE_FIELDS)[number][0];

/** A new site (dispatch.site_create): its time zone is derived by the service; a field it refuses is
 * shown under that field. */
function AddSite(props: { onAdded: (site: Site) => void; onCancel: () => void }) {
  const [values, setValues] = useState<Record<SiteField, string>>({
    name: "",
    address: "",
    city: "",
    state: "",
    zip: "",
    hours: "",
  });
  const [faults, setFaults] = useState<Map<string, string>>(new Map());
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setFaults(new Map());
    try {
      const body = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.trim()]));
      props.onAdded(await post<Site>("/api/dispatch/v1/sites", body));
    } catch (err) {
      const next = new Map<string, string>();
      if (err instanceof ApiProblem && err.errors.length > 0) {
        for (const f of err.errors) {
          const field = SITE_FIELDS.some(([k]) => k === f.field) ? f.field : "form";
          next.set(field, [next.get(field), f.message].filter(Boolean).join("; "));
        }
      } else next.set("form", err instanceof ApiProblem ? err.message : "The site was not added; try again.");
      setFaults(next);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="card add-site"
      aria-label="Add a site"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {SITE_FIELDS.map(([field, label, example]) => (
        <div key={field} class="add-site-field">
          <label for={`site-${field}`}>{label}</label>
          <input
            id={`site-${field}`}
            class="occ-field"
            placeholder={example}
            value={values[field]}
            maxLength={field === "state" ? 2 : field === "zip" ? 10 : 200}
            aria-invalid={faults.has(field)}
            aria-describedby={faults.has(field) ? `site-${field}-fault` : undefined}
            onInput={(e) => setValues({ ...values, [field]: (e.target as HTMLInputElement).value })}
          />
          {faults.has(field) && (
            <span class="field-error" id={`site-${field}-fault`} role="alert">
              {faults.get(field)}
            </span>
          )}
        </div>
      ))}
      {faults.has("form") && (
        <p class="field-error" role="alert">
          {faults.get("form")}
        </p>
      )}
      <p class="hint add-site-hint">The time zone is derived from the state and ZIP.</p>
      <div class="nte-actions">
        <button type="button" class="btn btn-quiet" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" class="btn btn-primary" disabled={busy}>
          Add site
        </button>
      </div>
    </form>
  );
}
