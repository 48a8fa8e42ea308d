// Geography: ZIP and city centroids (from the `zipcodes` data package) and great-circle distance.
// The data package is in memory, so this stays free of I/O.

import zipcodes from "zipcodes";
import type { Point } from "./distance.js";
import type { SitePoint } from "./orders/site-check.js";

export { distanceMiles, type Point } from "./distance.js";

export interface ZipCentroid extends Point {
  zip: string;
  state: string;
  city: string;
}

export function lookupZip(zip: string): ZipCentroid | undefined {
  const info = zipcodes.lookup(zip.slice(0, 5));
  if (info?.country !== "US") return undefined;
  return { zip: info.zip, state: info.state, city: info.city, lat: info.latitude, lon: info.longitude };
}

export function lookupCity(city: string, state: string): Point | undefined {
  const matches = zipcodes.lookupByName(city, state).filter((z) => z.country === "US");
  if (matches.length === 0) return undefined;
  // Centroid of the city's ZIP centroids: one stable point whatever order the package lists them in.
  let lat = 0;
  let lon = 0;
  for (const z of matches) {
    lat += z.latitude;
    lon += z.longitude;
  }
  return { lat: lat / matches.length, lon: lon / matches.length };
}

/** Places already resolved by approximatePoint (a view may resolve the same few hundred places on every
 * read); emptied when it grows past PLACE_MEMO_MAX, so it stays small whatever the places asked. */
const placeMemo = new Map<string, Point | null>();
const PLACE_MEMO_MAX = 20_000;

/**
 * An approximate point for a place as an order states it: its ZIP's centroid, else its city's (the mean of
 * the city's ZIP centroids), rounded to 4 decimals; null when neither is known. Good enough to draw it on
 * a map, never to find the site. Memoised: a city's lookup walks its state's ZIPs.
 */
export function approximatePoint(zip: string | null, city: string | null, state: string): Point | null {
  const key = `${zip ?? ""}|${city ?? ""}|${state}`;
  const held = placeMemo.get(key);
  if (held !== undefined) return held;
  const found = (zip ? lookupZip(zip) : undefined) ?? (city ? lookupCity(city, state) : undefined);
  const point = found ? { lat: round4(found.lat), lon: round4(found.lon) } : null;
  if (placeMemo.size >= PLACE_MEMO_MAX) placeMemo.clear();
  placeMemo.set(key, point);
  return point;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The site's point as a check-in is measured to (orders/site-check.ts): approximatePoint's, saying
 * whether it is a ZIP's centroid or a city's. */
export function sitePointOf(zip: string | null, city: string | null, state: string): SitePoint | null {
  const point = approximatePoint(zip, city, state);
  if (!point) return null;
  return { ...point, source: zip && lookupZip(zip) ? "zip" : "city" };
}

/** The lowest ZIP of a city in a state (a stable one of its ZIPs), or undefined for an unknown city. */
export function firstZipOfCity(city: string, state: string): string | undefined {
  let first: string | undefined;
  for (const z of zipcodes.lookupByName(city, state)) {
    if (z.country === "US" && (first === undefined || z.zip < first)) first = z.zip;
  }
  return first;
}

/** All US ZIP centroids of a state, sorted by ZIP (deterministic input for the sandbox generator). */
export function zipsOfState(state: string): ZipCentroid[] {
  return zipcodes
    .lookupByState(state)
    .filter((z) => z.country === "US")
    .map((z) => ({ zip: z.zip, state: z.state, city: z.city, lat: z.latitude, lon: z.longitude }))
    .sort((a, b) => (a.zip < b.zip ? -1 : a.zip > b.zip ? 1 : 0));
}

const RAD = Math.PI / 180;

/** A latitude/longitude box holding every point within `miles` of `p` (a little more, never less). No
 * longitude bounds when the box would cross the antimeridian or reach a pole. */
export function boundingBox(
  p: Point,
  miles: number,
): { minLat: number; maxLat: number; minLon: number; maxLon: number } {
  // A degree of latitude is at least 68.7 miles; a degree of longitude 69.17 * cos(latitude) miles,
  // shortest at the box's edge farthest from the equator.
  const dLat = miles / 68.7 + 0.01;
  const minLat = p.lat - dLat;
  const maxLat = p.lat + dLat;
  const far = Math.max(Math.abs(minLat), Math.abs(maxLat));
  const cos = far >= 89 ? 0 : Math.cos(far * RAD);
  const dLon = cos === 0 ? 360 : miles / (69.17 * cos) + 0.01;
  const minLon = p.lon - dLon;
  const maxLon = p.lon + dLon;
  return minLon < -180 || maxLon > 180
    ? { minLat, maxLat, minLon: -180, maxLon: 180 }
    : { minLat, maxLat, minLon, maxLon };
}
