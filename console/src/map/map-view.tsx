// The map view (loaded on first use, with d3-geo, topojson-client and the state shapes, so the board's
// own JavaScript stays small): the orders the board or the account's list holds, coloured by status, and
// for the dispatch team the pool's contractors (every page of them; their layer off by default when there
// are more than 300), whose base and service radius show on hover or focus.
// The orders come from the same signal the list keeps live from the event stream: a status change moves
// the point's colour without a reload. Clicking a point opens the order where the list shows it.

import type { ReadonlySignal } from "@preact/signals";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiProblem, eachPage } from "../api";
import { place, STATUS_LABEL } from "../format";
import type { Order, OrderStatus } from "../types";
import { type ContractorFeature, contractorLayer, LEGEND, type MapContractor, orderLayer } from "./layers";
import { offTheMap, SvgBaseMap } from "./svg-base-map";

export interface MapViewProps {
  /** The orders to draw: the board's (dispatch team) or the account's list, live. */
  orders: ReadonlySignal<Map<string, Order>>;
  /** The dispatch team's map draws the pool's contractors too (an account's never does). */
  withContractors: boolean;
  onOpenOrder: (orderId: string) => void;
  title: string;
}

/** Past this many contractors in the pool, the map opens with their layer off: the orders come first. */
const MANY_CONTRACTORS = 300;

/** The pool's contractors, every page of them (a list of 3,000 is 15 pages), drawn as they arrive. */
function usePool(enabled: boolean) {
  const [pool, setPool] = useState<{ list: MapContractor[]; total: number | null; done: boolean }>({
    list: [],
    total: null,
    done: false,
  });
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    (async () => {
      const list: MapContractor[] = [];
      const path = "/api/dispatcher/v1/contractors";
      for await (const page of eachPage<MapContractor, "contractors">(path, "contractors", { limit: 200 })) {
        if (!live) return;
        list.push(...page.items);
        setPool({ list: [...list], total: page.total, done: false });
      }
      if (live) setPool({ list, total: list.length, done: true });
    })().catch((err) => {
      if (live) setError(err instanceof ApiProblem ? err.message : "The contractors could not be loaded.");
    });
    return () => {
      live = false;
    };
  }, [enabled]);
  return { ...pool, error };
}

export function MapView({ orders, withContractors, onOpenOrder, title }: MapViewProps) {
  const pool = usePool(withContractors);
  const [hidden, setHidden] = useState<Set<OrderStatus>>(new Set());
  const [hovered, setHovered] = useState<string | null>(null);
  const [pinned, setPinned] = useState<string | null>(null);
  const [showChoice, setShowChoice] = useState<boolean | null>(null);

  const all = [...orders.value.values()];
  const counts = new Map<OrderStatus, number>();
  for (const o of all) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
  const placed = useMemo(
    () =>
      orderLayer(
        [...orders.value.values()].filter((o) => !hidden.has(o.status)),
        (o) => place(o.location),
      ),
    [orders.value, hidden],
  );
  const unplaced = all.filter((o) => !o.coordinates).length;
  const offMap = useMemo(() => offTheMap(placed), [placed]);
  const contractorFeatures = useMemo(() => contractorLayer(pool.list), [pool.list]);
  const contractorsOffMap = useMemo(() => offTheMap(contractorFeatures), [contractorFeatures]);
  const drawn = contractorFeatures.length - contractorsOffMap;
  // Off by default for a large pool (known from the first page's total), until the user says otherwise.
  const show = withContractors && (showChoice ?? (pool.total ?? pool.list.length) <= MANY_CONTRACTORS);
  const shownId = show ? (hovered ?? pinned) : null;
  const shown = pool.list.find((c) => c.contractor_id === shownId);

  const toggle = (s: OrderStatus) => {
    const next = new Set(hidden);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setHidden(next);
  };

  return (
    <section class="map-view" aria-labelledby="map-title">
      <div class="board-head">
        <h1 id="map-title">{title}</h1>
        <div class="stats">
          <span class="stat">
            <strong>{placed.length - offMap}</strong> orders shown
          </span>
          {withContractors && (
            <span class="stat" data-testid="map-contractor-count">
              <strong>{show ? drawn : 0}</strong> of {pool.total ?? pool.list.length} contractors shown
            </span>
          )}
        </div>
      </div>
      {pool.error && (
        <p class="error" role="alert">
          {pool.error} Showing {pool.list.length} of {pool.total ?? "the pool's"} contractors.
        </p>
      )}
      <div class="map-layout">
        <div class="map-frame card">
          <SvgBaseMap
            label={`Map of the United States: ${placed.length - offMap} orders${show ? ` and ${drawn} contractors` : ""}`}
            orders={placed}
            contractors={show ? contractorFeatures : NONE}
            shownContractor={shownId}
            pinnedContractor={pinned}
            onShowContractor={(id, pin) => {
              if (pin) setPinned(pinned === id ? null : id);
              else setHovered(id);
            }}
            onOpenOrder={onOpenOrder}
          />
          <p class="map-note">
            Points are approximate: each order at its ZIP's centroid (else its city's)
            {withContractors ? ", each contractor at its base" : ""}. Where points are dense, a cluster counts
            them: click it to zoom in.{" "}
            {unplaced > 0 && `${unplaced} order${unplaced === 1 ? " has" : "s have"} no known place. `}
            {offMap > 0 && `${offMap} order${offMap === 1 ? " is" : "s are"} outside the map (Guam, say).`}
          </p>
        </div>
        <aside class="map-side card" aria-label="Legend">
          <h2>Status</h2>
          <ul class="map-legend">
            {LEGEND.map((s) => (
              <li key={s}>
                <button
                  type="button"
                  class="legend-item"
                  aria-pressed={!hidden.has(s)}
                  title={hidden.has(s) ? "Show on the map" : "Hide from the map"}
                  onClick={() => toggle(s)}
                >
                  <svg class="legend-swatch" viewBox="0 0 12 12" aria-hidden="true">
                    <circle class={`map-order st-fill-${s}`} cx="6" cy="6" r="5" />
                  </svg>
                  <span class="legend-label">{STATUS_LABEL[s]}</span>
                  <span class="legend-count">{counts.get(s) ?? 0}</span>
                </button>
              </li>
            ))}
          </ul>
          {withContractors && (
            <ContractorLegend
              pool={pool}
              placed={contractorFeatures.length}
              offMap={contractorsOffMap}
              show={show}
              onShow={setShowChoice}
              shown={shown}
            />
          )}
        </aside>
      </div>
    </section>
  );
}

const NONE: ContractorFeature[] = [];

/** The contractors' part of the legend: the layer's toggle, how many are loaded, the one shown. */
function ContractorLegend(props: {
  pool: { list: MapContractor[]; total: number | null; done: boolean };
  placed: number;
  offMap: number;
  show: boolean;
  onShow: (show: boolean) => void;
  shown: MapContractor | undefined;
}) {
  const { pool, shown } = props;
  const unplaced = pool.list.length - props.placed;
  return (
    <>
      <h2>Contractors</h2>
      <label class="map-layer-toggle">
        <input type="checkbox" checked={props.show} onChange={(e) => props.onShow(e.currentTarget.checked)} />
        Show contractors
      </label>
      <p class="legend-contractor">
        <svg class="legend-swatch" viewBox="0 0 12 12" aria-hidden="true">
          <rect class="map-contractor" x="2" y="2" width="8" height="8" transform="rotate(45 6 6)" />
        </svg>
        Base; hover, focus or click for its service radius.
      </p>
      <p class="map-pool" aria-live="polite">
        {pool.done
          ? `All ${pool.list.length} contractors of the pool loaded${unplaced > 0 ? `; ${unplaced} without a known base` : ""}${props.offMap > 0 ? `; ${props.offMap} based outside the map (Guam, American Samoa, the Northern Marianas)` : ""}.`
          : `Loading contractors: ${pool.list.length}${pool.total === null ? "" : ` of ${pool.total}`}…`}
      </p>
      <p class="map-shown" aria-live="polite">
        {shown
          ? `${shown.name}: base ${shown.base_zip ?? "unknown ZIP"}, ${shown.service_radius_miles ? `serves ${shown.service_radius_miles} mi around it` : "serves anywhere in its states"} (${shown.status}).`
          : ""}
      </p>
    </>
  );
}
