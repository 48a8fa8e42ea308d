// Check-in and check-out at the site: where the contractor's phone said it was when it reported "on site"
// and "completed", and how far that is from the site. A check-in far from the site is accepted and
// flagged, never refused: a phone's position can be wrong, a site can be a campus, and the dispatch team
// decides what a flag means.
//
// The site's point is what the order states: today the centroid of its ZIP, else of its city (an order
// names no coordinates). The tolerance grows with that point's vagueness and with the accuracy the phone
// reports, so a flag says "further than the order's own location can explain".

import { distanceMiles, type Point } from "../distance.js";

/** A position as a phone reports it: degrees (WGS 84) and, when known, its accuracy radius in metres. */
export interface ReportedPosition {
  lat: number;
  lon: number;
  accuracy_m?: number | null;
}

/** Where the site is, as precisely as the order says it. */
export interface SitePoint extends Point {
  /** zip: the centroid of the order's ZIP; city: the mean of its city's ZIP centroids. */
  source: "zip" | "city";
}

/** One check (in or out) as the order and its sealed record keep it. */
export interface SiteCheck {
  at: string;
  /** The phone's position, or null when it gave none. */
  position: { lat: number; lon: number; accuracy_m: number | null } | null;
  /** The point the distance was measured to, or null when the order's location is not on the map. */
  site_point: SitePoint | null;
  /** Great-circle miles from the position to the site's point, 2 decimals; null without both. */
  distance_miles: number | null;
  /** The miles a position may be from the site's point before it is flagged (null without a point). */
  tolerance_miles: number | null;
  /** true when the position is further from the site than the tolerance and its accuracy explain. */
  flagged: boolean;
}

const METRES_PER_MILE = 1609.344;
/** A city's point is the mean of its ZIP centroids: a large city spans many ZIPs, so a position is judged
 * against it with this many times the ZIP tolerance. */
const CITY_TOLERANCE_FACTOR = 3;

/** The check a report makes: `toleranceMiles` is the allowance for a ZIP centroid (config). */
export function siteCheck(
  at: string,
  position: ReportedPosition | null | undefined,
  site: SitePoint | null,
  toleranceMiles: number,
): SiteCheck {
  const pos = position
    ? { lat: position.lat, lon: position.lon, accuracy_m: position.accuracy_m ?? null }
    : null;
  const tolerance = site ? toleranceMiles * (site.source === "city" ? CITY_TOLERANCE_FACTOR : 1) : null;
  if (!pos || !site || tolerance === null) {
    return {
      at,
      position: pos,
      site_point: site,
      distance_miles: null,
      tolerance_miles: tolerance,
      flagged: false,
    };
  }
  const miles = distanceMiles(pos, site);
  const accuracyMiles = (pos.accuracy_m ?? 0) / METRES_PER_MILE;
  return {
    at,
    position: pos,
    site_point: site,
    distance_miles: Math.round(miles * 100) / 100,
    tolerance_miles: tolerance,
    flagged: miles - accuracyMiles > tolerance,
  };
}
