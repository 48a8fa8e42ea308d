// The map view (loaded on first use, with d3-geo, topojson-client and the state shapes, so the board's
// own JavaScript stays small): the orders the board or the account's list holds, coloured by status, and
// for the dispatch team the pool's contractors, whose base and service radius show on hover or focus.
// The orders come from the same signal the list keeps live from the event stream: a status change moves
// the point's colour without a reload. Clicking a point opens the order where the list shows it.

import type { ReadonlySignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { ApiProblem, allPages } from "../api";
import { place, STATUS_LABEL } from "../format";
import type { Order, OrderStatus } from "../types";
import { contractorLayer, LEGEND, type MapContractor, orderLayer } from "./layers";
import { SvgBaseMap } from "./svg-base-map";

export interface MapViewProps {
  /** The orders to draw: the board's (dispatch team) or the account's list, live. */
  orders: ReadonlySignal<Map<string, Order>>;
  /** The dispatch team's map draws the pool's contractors too (an account's never does). */
  withContractors: boolean;
  onOpenOrder: (orderId: string) => void;
  title: string;
}

export function MapView({ orders, withContractors, onOpenOrder, title }: MapViewProps) {
  const [contractors, setContractors] = useState<MapContractor[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [hidden, setHidden] = useState<Set<OrderStatus>>(new Set());
  const [hovered, setHovered] = useState<string | null>(null);
  const [pinned, setPinned] = useState<string | null>(null);

  useEffect(() => {
    if (!withContractors) return;
    let live = true;
    allPages<MapContractor, "contractors">("/api/dispatcher/v1/contractors", "contractors", { limit: 200 })
      .then((list) => live && setContractors(list))
      .catch((err) => {
        if (live) setError(err instanceof ApiProblem ? err.message : "The contractors could not be loaded.");
      });
    return () => {
      live = false;
    };
  }, [withContractors]);

  const all = [...orders.value.values()];
  const counts = new Map<OrderStatus, number>();
  for (const o of all) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
  const placed = orderLayer(
    all.filter((o) => !hidden.has(o.status)),
    (o) => place(o.location),
  );
  const unplaced = all.filter((o) => !o.coordinates).length;
  const contractorFeatures = contractorLayer(contractors);
  const shownId = hovered ?? pinned;
  const shown = contractors.find((c) => c.contractor_id === shownId);

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
            <strong>{placed.length}</strong> orders shown
          </span>
          {withContractors && (
            <span class="stat">
              <strong>{contractorFeatures.length}</strong> contractors
            </span>
          )}
        </div>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="map-layout">
        <div class="map-frame card">
          <SvgBaseMap
            label={`Map of the United States: ${placed.length} orders${withContractors ? ` and ${contractorFeatures.length} contractors` : ""}`}
            orders={placed}
            contractors={contractorFeatures}
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
            {withContractors ? ", each contractor at its base" : ""}.{" "}
            {unplaced > 0 && `${unplaced} order${unplaced === 1 ? " has" : "s have"} no known place.`}
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
            <>
              <h2>Contractors</h2>
              <p class="legend-contractor">
                <svg class="legend-swatch" viewBox="0 0 12 12" aria-hidden="true">
                  <rect class="map-contractor" x="2" y="2" width="8" height="8" transform="rotate(45 6 6)" />
                </svg>
                Base; hover, focus or click for its service radius.
              </p>
              <p class="map-shown" aria-live="polite">
                {shown
                  ? `${shown.name}: base ${shown.base_zip ?? "unknown ZIP"}, ${shown.service_radius_miles ? `serves ${shown.service_radius_miles} mi around it` : "serves anywhere in its states"} (${shown.status}).`
                  : ""}
              </p>
            </>
          )}
        </aside>
      </div>
    </section>
  );
}
