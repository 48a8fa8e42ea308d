// A place and the great-circle distance between two, apart from the ZIP data of geo.ts: the optimiser's
// worker thread (operations/kernel/day-planner-thread.ts) measures distances without loading that
// package (most of a second and 30 MB of heap).

export interface Point {
  lat: number;
  lon: number;
}

const EARTH_RADIUS_MILES = 3958.8;
const RAD = Math.PI / 180;

/** Haversine distance in miles. */
export function distanceMiles(a: Point, b: Point): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLon = (b.lon - a.lon) * RAD;
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_MILES * Math.asin(Math.min(1, Math.sqrt(s)));
}
