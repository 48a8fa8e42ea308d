// The shapes the console reads from the API (the operations' output schemas, as far as it uses them). The
// order statuses and urgencies are the service's own lists (src/domain, bundled by Vite), so a status or
// urgency added there is one here: every Record<OrderStatus, ...> then fails typecheck until it has it.

import type { OrderStatus } from "../../src/domain/orders/statuses";
import type { Urgency } from "../../src/domain/pricing";

export type { OrderStatus };

type KeyKind = "account" | "contractor" | "dispatcher";

export interface Session {
  kind: KeyKind;
  livemode: boolean;
  account_id: string;
  contractor_id: string | null;
  csrf_token: string;
  expires_at: string;
}

interface Location {
  state: string;
  zip: string | null;
  city: string | null;
  address?: string | null;
  name?: string | null;
}

/** An order as an account (dispatch.order_list) or the dispatch team (dispatcher.orders) reads it. */
export interface Order {
  order_id: string;
  status: OrderStatus;
  status_detail: string;
  contractor_ref: string | null;
  trade: string;
  urgency: Urgency;
  location: Location;
  description: string;
  nte_cents: number | null;
  /** The NTE raised by the account's approval of a contractor's request; the one in force when set. */
  nte_approved_cents?: number | null;
  reference_id: string | null;
  estimated_cost_cents: number;
  /** The price of the contractor's counter the account accepted; null when none was. */
  agreed_price_cents?: number | null;
  final_cost_cents: number | null;
  eta_at: string | null;
  status_reason: string | null;
  created_at: string;
  updated_at: string;
  /** Approximate: its ZIP's centroid, else its city's; null when neither is known (lists and events). */
  coordinates?: { lat: number; lon: number } | null;
  /** The contractor's check-in ("on site") and check-out ("completed"): where its phone was, how far
   * from the site, flagged when far. */
  check_in?: SiteCheck | null;
  check_out?: SiteCheck | null;
  /** The service report (PDF) once completed; null before. */
  report_url?: string | null;
  /** The job's local time zone (IANA); null for orders made before it was kept. */
  time_zone?: string | null;
  arrival_window?: { start: string; end: string; source: string } | null;
  respond_by?: string | null;
  arrive_by?: string | null;
  /** The dispatch team's view only. */
  account_id?: string;
  contractor_id?: string | null;
  offer_deadline_at?: string | null;
  /** Null in the event stream's orders: the board keeps the names it learnt from the lists. */
  account_name?: string | null;
  contractor_name?: string | null;
  /** The dispatch team's: the block of its contractor's time the job holds (null: none; absent in the event
   * stream's orders, which keep the one read before). */
  booked?: { start: string; end: string } | null;
  service_levels?: ServiceLevel[];
}

/** A service-level clock of an order (dispatcher.orders). */
export interface ServiceLevel {
  clock: "respond" | "arrive";
  started_at: string;
  deadline: string;
  at_risk_at: string;
  done_at: string | null;
  standing: "on_track" | "at_risk" | "breached" | "met";
}

export interface SiteCheck {
  at: string;
  position: { lat: number; lon: number; accuracy_m: number | null } | null;
  site_point: { lat: number; lon: number; source: "zip" | "city" } | null;
  distance_miles: number | null;
  tolerance_miles: number | null;
  flagged: boolean;
}

/** An order's attachment (order.attachments). */
export interface Attachment {
  attachment_id: string;
  kind: "photo" | "document" | "signature";
  media_type: string;
  size: number;
  sha256: string;
  caption: string | null;
  signer_name: string | null;
  filename: string | null;
  uploaded_by: "account" | "contractor";
  created_at: string;
  content_url: string;
  thumbnail_url: string | null;
  record: { seal: string; verify_url: string };
}

interface JobBase {
  order_id: string;
  trade: string;
  urgency: Urgency;
  description: string;
  location: Location;
  nte_cents: number | null;
  estimated_cost_cents: number;
  /** The price of the contractor's counter the account accepted; null when none was. */
  agreed_price_cents?: number | null;
  /** When to be there: the job's zone, its arrival window (routine, scheduled) or arrive-by. */
  time_zone?: string | null;
  arrival_window?: { start: string; end: string; source: string } | null;
  arrive_by?: string | null;
}

/** A contractor's counter-offer (the order's `counter`, the contractor's offer's `counter`). */
export interface Counter {
  offer_id: string;
  status: "pending" | "accepted" | "declined" | "expired" | "withdrawn";
  price_cents: number | null;
  arrival_window: { start: string; end: string } | null;
  note: string | null;
  created_at: string;
  deadline_at: string;
  decided_at: string | null;
  reason: string | null;
}

export interface Offer extends JobBase {
  offer_id: string;
  attempt: number;
  offered_at: string;
  deadline_at: string;
  /** The contractor's counter, while it waits on the account. */
  counter?: Counter;
}

export interface Job extends JobBase {
  status: OrderStatus;
  address: string | null;
  location_name: string | null;
  accepted_at: string | null;
  eta_at: string | null;
  /** In the list of jobs: the block of the contractor's time the job holds (null: placed without one). */
  booked?: { start: string; end: string } | null;
}

export interface Contractor {
  contractor_id: string;
  name: string;
  trades: string[];
  states: string[];
  distance_miles: number | null;
  status: "active" | "inactive" | "excluded";
  rating: number;
  capacity: { max_active_jobs: number; in_use: number; free: number; open_jobs: number };
  /** The IANA zone its hours are read in. */
  time_zone: string;
  /** Its shift when the directory answered (dispatcher.contractors). */
  shift: {
    on_shift: boolean;
    off_reason: "hours" | "time_off" | null;
    ends_at: string | null;
    next_on_shift_at: string | null;
    time_off_today: Array<{ start: string; end: string }>;
  };
  /** Whether it can be on site in time for the order asked about (order_id); null without one. */
  arrival: { fits: boolean; earliest_at: string | null } | null;
}

export interface StreamEvent {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: Record<string, unknown>;
}

/** An invoice's line as the service shows it (order.invoice): the contractor's input with its amount. */
export interface InvoiceLineView {
  kind: "labour" | "trip_charge" | "materials" | "other" | "tax";
  description?: string;
  hours?: number;
  rate_cents?: number;
  part_number?: string;
  quantity?: number;
  unit_price_cents?: number;
  amount_cents: number;
}

/** A job's invoice (GET /api/orders/:order_id/invoice). */
export interface Invoice {
  order_id: string;
  status: "submitted" | "revision_requested" | "rejected" | "approved" | "paid";
  version: number;
  itemised: boolean;
  lines: InvoiceLineView[];
  subtotal_cents: number;
  tax_cents: number;
  total_cents: number;
  submitted_at: string;
  versions: Array<{ version: number; total_cents: number; created_at: string; verify_url: string | null }>;
  checks: Array<{
    code: string;
    result: "pass" | "flag" | "not_applicable";
    message: string;
    figures: Record<string, number | null>;
    missing?: string[];
  }>;
  flags: number;
  decisions: Array<{
    decision: "approved" | "rejected" | "revision_requested" | "paid";
    version: number;
    total_cents: number;
    reason_code: string | null;
    note: string | null;
    payment_reference: string | null;
    paid_on: string | null;
    decided_at: string;
    by_policy: boolean;
    decided_by: string | null;
  }>;
}
