// Service levels: on-time arrival (Field Nation's rule) and, per urgency, the share of orders whose every
// service-level clock was met. Computed by a live query (domain/orders/sla-figures.ts), not the rollup.

import { ON_TIME_EARLY_MS, ON_TIME_LATE_MS, type SlaFigures } from "../../../domain/orders/sla-figures.js";
import { URGENCIES } from "../../../domain/pricing.js";
import { ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";

export function serviceLevelFigures(sl: SlaFigures) {
  return {
    on_time_arrival_rate: ratio(sl.onTime.onTime, sl.onTime.arrived),
    on_time_arrivals: sl.onTime.onTime,
    sla_attainment: {
      emergency: ratio(sl.attainment.emergency.met, sl.attainment.emergency.decided),
      urgent: ratio(sl.attainment.urgent.met, sl.attainment.urgent.decided),
      routine: ratio(sl.attainment.routine.met, sl.attainment.routine.decided),
      scheduled: ratio(sl.attainment.scheduled.met, sl.attainment.scheduled.decided),
    },
  };
}

export function serviceLevelProvenance(sl: SlaFigures, p: Entry): Provenance {
  return {
    "service_levels.on_time_arrival_rate": p(
      `${ORDERS_SOURCE} with a promise (live query): on_site_at, window_start, arrive_by`,
      `count(on_site_at between window_start - ${ON_TIME_EARLY_MS / 60_000} min and window_start + ${ON_TIME_LATE_MS / 60_000} min, or on_site_at <= arrive_by without a window) / count(on_site_at is not null and (window_start or arrive_by is not null))`,
      sl.onTime.arrived,
      "on_site_at is the arrival of the contractor holding the job (a reassignment clears it); orders received before it was stored (migration 0013) or without a promise (migration 0017) are not in the sample.",
    ),
    "service_levels.on_time_arrivals": p(
      `${ORDERS_SOURCE} with a promise (live query): on_site_at, window_start, arrive_by`,
      "on_time_arrival_rate's numerator",
      sl.onTime.arrived,
    ),
    ...Object.fromEntries(
      URGENCIES.map((u) => [
        `service_levels.sla_attainment.${u}`,
        p(
          `${ORDERS_SOURCE} with a promise (live query): respond_by, first_accepted_at, arrive_by, window_end, on_site_at, sla_*_breached_at, status`,
          `count(urgency = ${u} and every clock met) / count(urgency = ${u} and every clock has an outcome); respond met: first_accepted_at <= respond_by; arrive met: on_site_at <= coalesce(arrive_by, window_end)`,
          sl.attainment[u].decided,
          "Orders with a clock still running, or cancelled before a deadline they had not yet met, are not in the sample; a deadline that passed while the order is open counts as missed before the watch records the breach.",
        ),
      ]),
    ),
  };
}
