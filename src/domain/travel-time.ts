// Travel time between two places: the one source of speed for matching (the ETA and the gaps between a
// contractor's jobs), availability and the optimised day. A port, so that a routing engine (or a matrix
// it fills) can replace the estimate later; the implementation here is great-circle distance times a
// road factor at an average speed. Pure.

import { distanceMiles, type Point } from "./distance.js";

/** Roads are longer than the great circle: a common planning factor for US road networks. */
export const ROAD_FACTOR = 1.3;
/** Average speed across a service area, city and highway mixed. */
export const AVERAGE_MPH = 30;
/** Travel time assumed when either place is unknown. */
export const UNKNOWN_TRAVEL_MINUTES = 45;

/** Minutes to drive from one place to another; null (unknown) counts UNKNOWN_TRAVEL_MINUTES. */
export interface TravelTime {
  /** What it is, as plain data: the optimiser's worker thread rebuilds it from this (travelOf). */
  readonly model: TravelModel;
  minutes(from: Point | null, to: Point | null): number;
}

/** A travel time as plain (structured-cloneable) data: the great-circle estimate and its parameters. */
export interface TravelModel {
  readonly kind: "great_circle";
  readonly roadFactor: number;
  readonly averageMph: number;
  readonly unknownMinutes: number;
}

/** Minutes to drive `miles` of great-circle distance. */
export function greatCircleMinutes(miles: number): number {
  return ((miles * ROAD_FACTOR) / AVERAGE_MPH) * 60;
}

/** The travel time a model describes. */
export function travelOf(model: TravelModel): TravelTime {
  return {
    model,
    minutes(from, to) {
      if (from === null || to === null) return model.unknownMinutes;
      if (from.lat === to.lat && from.lon === to.lon) return 0;
      return ((distanceMiles(from, to) * model.roadFactor) / model.averageMph) * 60;
    },
  };
}

/** The great-circle estimate (see the module's comment). */
export const greatCircleTravel: TravelTime = travelOf({
  kind: "great_circle",
  roadFactor: ROAD_FACTOR,
  averageMph: AVERAGE_MPH,
  unknownMinutes: UNKNOWN_TRAVEL_MINUTES,
});
