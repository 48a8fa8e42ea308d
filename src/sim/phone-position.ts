// Where a simulated contractor's phone says it is when it checks in ("on site") and out ("completed"):
// near the order's site point (its ZIP's centroid, else its city's), with a phone's accuracy, and now and
// then miles away (a wrong fix, or a check-in from the van down the road) so that the console shows the
// dispatch team a flag. Drawn from the order's id and the step, not from the caller's random stream, so
// adding positions changed no simulated run's other draws.

import { sitePointOf } from "../domain/geo.js";
import type { ReportedPosition } from "../domain/orders/site-check.js";
import { rngOf, seedOf } from "../domain/random.js";

/** Share of checks made far from the site. */
const FAR_SHARE = 0.03;
const MILES_PER_DEGREE_LAT = 69;

export function phonePosition(
  order: { id: string; zip: string | null; city: string | null; state: string },
  step: "on_site" | "completed",
): ReportedPosition | undefined {
  const site = sitePointOf(order.zip, order.city, order.state);
  if (!site) return undefined;
  const rng = rngOf(seedOf(order.id, step));
  const far = rng() < FAR_SHARE;
  const miles = far ? 5 + rng() * 10 : rng() * 0.3;
  const bearing = rng() * 2 * Math.PI;
  const dLat = (miles * Math.cos(bearing)) / MILES_PER_DEGREE_LAT;
  const dLon = (miles * Math.sin(bearing)) / (MILES_PER_DEGREE_LAT * Math.cos((site.lat * Math.PI) / 180));
  const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    lat: round6(site.lat + dLat),
    lon: round6(site.lon + dLon),
    accuracy_m: Math.round(5 + rng() * 35),
  };
}
