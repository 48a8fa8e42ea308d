// Travel time between two places: the one source of speed for matching (the ETA and the gaps between a
// contractor's jobs), availability and the optimised day. A port, so that a routing engine (or a matrix
// it fills) can replace the estimate later; the implementation here is great-circle distance times a
// road factor at an average speed. Pure.

import { distanceMiles, type Point } from "./geo.js";

/** Roads are longer than the great circle: a common planning factor for US road networks. */
export const ROAD_FACTOR = 1.3;
/** Average speed across a service area, city and highway mixed. */
export const AVERAGE_MPH = 30;
/** Travel time assumed when either place is unknown. */
export const UNKNOWN_TRAVEL_MINUTES = 45;

/** Minutes to drive from one place to another; null (unknown) counts UNKNOWN_TRAVEL_MINUTES. */
export interface TravelTime {
  minutes(from: Point | null, to: Point | null): number;
}

/** Minutes to drive `miles` of great-circle distance. */
export function greatCircleMinutes(miles: number): number {
  return ((miles * ROAD_FACTOR) / AVERAGE_MPH) * 60;
}

/** The great-circle estimate (see the module's comment). */
export const greatCircleTravel: TravelTime = {
  minutes(from, to) {
    if (from === null || to === null) return UNKNOWN_TRAVEL_MINUTES;
    if (from.lat === to.lat && from.lon === to.lon) return 0;
    return greatCircleMinutes(distanceMiles(from, to));
  },
};
