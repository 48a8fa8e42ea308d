// The events of the pool (not of an order) on the dispatch team's event stream, defined once for the
// stream's schema, the stores that write them and the web console (which bundles this file, so it stays
// free of imports): the day's compliance list, and a change to a contractor's standing, calendar or file
// (its time off, its activation or exclusion, a pool import), so an open schedule reads its lanes again.

export const POOL_COMPLIANCE_EVENT = "pool.compliance_expiring";
export const CONTRACTOR_CHANGED_EVENT = "pool.contractor_changed";

export const POOL_EVENT_TYPES = [POOL_COMPLIANCE_EVENT, CONTRACTOR_CHANGED_EVENT] as const;
export type PoolEventType = (typeof POOL_EVENT_TYPES)[number];
