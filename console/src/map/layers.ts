// The map's layers, apart from any way of drawing them: the orders and the contractors as GeoJSON point
// features (longitude, latitude) with the properties a renderer styles them by, the order of the status
// legend, and each contractor's service area as a radius in miles. The SVG base map (svg-base-map.tsx)
// draws them today; a MapLibre map with a local style could take the same features as GeoJSON sources,
// colour by `status` from the same --map-* CSS variables (styles.css), and call the same onOpenOrder. Nothing here
// imports d3, the shapes or the DOM.

import { everyStatus } from "../format";
import type { Order, OrderStatus } from "../types";

interface Coordinates {
  lat: number;
  lon: number;
}

interface PointFeature<P> {
  type: "Feature";
  id: string;
  geometry: { type: "Point"; coordinates: [number, number] };
  properties: P;
}

interface OrderProps {
  order_id: string;
  status: OrderStatus;
  trade: string;
  place: string;
  /** Its account and contractor by name, as the reader may see them ("acme · Lone Star Plumbing"). */
  who: string;
}

interface ContractorProps {
  contractor_id: string;
  name: string;
  standing: "active" | "inactive" | "excluded";
  trades: string[];
  base_zip: string | null;
  /** How far from its base it travels; null: anywhere in its states (no circle to draw). */
  radius_miles: number | null;
}

export type OrderFeature = PointFeature<OrderProps>;
export type ContractorFeature = PointFeature<ContractorProps>;

/** The legend's order: what needs a human first, then the work under way, then what is closed. */
export const LEGEND: OrderStatus[] = everyStatus([
  "needs_dispatcher",
  "cannot_complete",
  "received",
  "offered",
  "accepted",
  "en_route",
  "on_site",
  "completed",
  "invoiced",
  "revision_requested",
  "invoice_rejected",
  "approved",
  "paid",
  "cancelled",
]);

/** Closed orders: drawn smaller, under the open ones. */
export const CLOSED = new Set<OrderStatus>([
  "completed",
  "invoiced",
  "revision_requested",
  "invoice_rejected",
  "approved",
  "paid",
  "cancelled",
]);

/** A contractor as the dispatch team's directory lists it (the fields the map reads). */
export interface MapContractor {
  contractor_id: string;
  name: string;
  status: ContractorProps["standing"];
  trades: string[];
  base_zip: string | null;
  base_coordinates: Coordinates | null;
  service_radius_miles: number | null;
}

const point = (c: Coordinates): PointFeature<never>["geometry"] => ({
  type: "Point",
  coordinates: [c.lon, c.lat],
});

/** The orders that have a place (coordinates null: neither ZIP nor city known), closed ones first so the
 * open ones draw on top. */
export function orderLayer(orders: Iterable<Order>, placeOf: (o: Order) => string): OrderFeature[] {
  const out: OrderFeature[] = [];
  for (const o of orders) {
    if (!o.coordinates) continue;
    out.push({
      type: "Feature",
      id: o.order_id,
      geometry: point(o.coordinates),
      properties: {
        order_id: o.order_id,
        status: o.status,
        trade: o.trade,
        place: placeOf(o),
        who: [o.account_name, o.contractor_name].filter(Boolean).join(" · "),
      },
    });
  }
  const rank = (f: OrderFeature) => (CLOSED.has(f.properties.status) ? 0 : 1);
  return out.sort((a, b) => rank(a) - rank(b) || a.id.localeCompare(b.id));
}

/** The contractors whose base is known. */
export function contractorLayer(contractors: Iterable<MapContractor>): ContractorFeature[] {
  const out: ContractorFeature[] = [];
  for (const c of contractors) {
    if (!c.base_coordinates) continue;
    out.push({
      type: "Feature",
      id: c.contractor_id,
      geometry: point(c.base_coordinates),
      properties: {
        contractor_id: c.contractor_id,
        name: c.name,
        standing: c.status,
        trades: c.trades,
        base_zip: c.base_zip,
        radius_miles: c.service_radius_miles,
      },
    });
  }
  return out;
}

/** Miles in one degree of a great circle: a service radius as the angle d3-geo's geoCircle (or a
 * MapLibre circle polygon) takes. */
export const MILES_PER_DEGREE = 69.09;
