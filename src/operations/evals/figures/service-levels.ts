// Service levels: on-time arrival (Field Nation's rule) and, per urgency, the share of orders whose every
// service-level clock was met (domain/orders/sla-figures.ts): from the daily rollup's sums, corrected with
// the orders whose clocks still run (a deadline passing changes their outcome with no write).

import { ON_TIME_EARLY_MS, ON_TIME_LATE_MS, type SlaFigures } from "../../../domain/orders/sla-figures.js";
import { URGENCIES } from "../../../domain/pricing.js";
import { ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

/** The service levels as the rollup's sums count them (no deadline passed unless its breach is recorded). */
export function rolledServiceLevels(t: Tally): SlaFigures {
  const attainment = (u: (typeof URGENCIES)[number]) => ({
    decided: t.sum(`sla_decided_${u}`),
    met: t.sum(`sla_met_${u}`),
  });
  return {
    onTime: { arrived: t.sum("on_time_arrived"), onTime: t.sum("on_time") },
    attainment: {
      emergency: attainment("emergency"),
      urgent: attainment("urgent"),
      routine: attainment("routine"),
      scheduled: attainment("scheduled"),
    },
  };
}

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
      `${ORDERS_SOURCE} with a promise (daily rollup): on_site_at, window_start, arrive_by`,
      `count(on_site_at between window_start - ${ON_TIME_EARLY_MS / 60_000} min and window_start + ${ON_TIME_LATE_MS / 60_000} min, or on_site_at <= arrive_by without a window) / count(on_site_at is not null and (window_start or arrive_by is not null))`,
      sl.onTime.arrived,
      "on_site_at is the arrival of the contractor holding the job (a reassignment clears it); orders received before it was stored (migration 0013) or without a promise (migration 0017) are not in the sample.",
    ),
    "service_levels.on_time_arrivals": p(
      `${ORDERS_SOURCE} with a promise (daily rollup): on_site_at, window_start, arrive_by`,
      "on_time_arrival_rate's numerator",
      sl.onTime.arrived,
    ),
    ...Object.fromEntries(
      URGENCIES.map((u) => [
        `service_levels.sla_attainment.${u}`,
        p(
          `${ORDERS_SOURCE} with a promise (daily rollup; orders with a clock still running read live): respond_by, first_accepted_at, arrive_by, window_end, on_site_at, sla_*_breached_at, status`,
          `count(urgency = ${u} and every clock met) / count(urgency = ${u} and every clock has an outcome); respond met: first_accepted_at <= respond_by; arrive met: on_site_at <= coalesce(arrive_by, window_end)`,
          sl.attainment[u].decided,
          "Orders with a clock still running, or cancelled before a deadline they had not yet met, are not in the sample; a deadline that passed while the order is open counts as missed before the watch records the breach.",
        ),
      ]),
    ),
  };
}
