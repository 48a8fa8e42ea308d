// Table types for Kysely. Columns are dialect-neutral: text ids and ISO-8601 UTC timestamps (which sort
// as text), integer cents, integer 0/1 flags, JSON kept as text.

import type { Generated } from "kysely";
import type { AuditCheckpointRow, AuditRecordRow, LegalHoldRow } from "../audit/persistence.js";
import type { KeyRole } from "../domain/key-roles.js";
import type { EtaTier } from "../domain/matching.js";
import type { CounterStatus, NteRequestStatus, OfferStatus } from "../domain/orders/order.js";
import type { OrderStatus } from "../domain/orders/transitions.js";
import type { Urgency } from "../domain/pricing.js";
import type { WindowSource } from "../domain/time/service-window.js";
import type { TradeCode } from "../domain/trades.js";

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  mode: "live" | "test";
  key_hash: string;
  key_hint: string;
  label: string | null;
  rate_limit_per_minute: number | null;
  rate_limit_burst: number | null;
  created_at: string;
  revoked_at: string | null;
  /** account: a caller's key; contractor: a contractor's own; dispatcher: the dispatch team's. */
  kind: KeyKind;
  /** The contractor a contractor key belongs to. */
  contractor_id: string | null;
  /** An account key's role (migration 0039): requester, approver or admin; null reads as admin. */
  role: KeyRole | null;
  /** An approver's approval limit, in cents; null: no limit. */
  approval_limit_cents: number | null;
}

export type KeyKind = "account" | "contractor" | "dispatcher";

/** A web console session (migration 0018): the SHA-256 of its cookie, never the cookie itself. */
export interface ConsoleSessionsTable {
  id_hash: string;
  /** The API key it was exchanged for: its checks (revocation included) are the session's. */
  key_id: string;
  csrf_token: string;
  created_at: string;
  /** Idle expiry, moved on as the session is used. */
  expires_at: string;
}

export interface ContractorsTable {
  id: string;
  pool: "sandbox" | "live";
  external_ref: string | null;
  name: string;
  email: string | null;
  phone: string | null;
  trades: string; // JSON array of trade codes
  states: string; // JSON array of state codes
  home_zip: string | null;
  lat: number | null;
  lon: number | null;
  service_radius_miles: number | null;
  hourly_rate_cents: number;
  emergency_capable: number;
  max_active_jobs: number;
  /** Jobs currently held (reserved in the order's transaction); at most max_active_jobs. */
  active_jobs: Generated<number>;
  rating: number;
  response_minutes: number;
  active: number;
  excluded: number;
  created_at: string;
  updated_at: string;
  /** Until when insurance and license are verified (YYYY-MM-DD; migration 0009); null: not verified. */
  insurance_verified_until?: string | null;
  license_verified_until?: string | null;
  /** Working hours, canonical text (domain/time/calendar.ts; migration 0019); null: any time. */
  hours?: string | null;
  /** The tally of its accounts' ratings (domain/ratings.ts; migration 0036) and when it last moved. */
  rating_count: Generated<number>;
  rating_quality_sum: Generated<number>;
  rating_timeliness_sum: Generated<number>;
  rating_communication_sum: Generated<number>;
  rating_value_sum: Generated<number>;
  rated_at?: string | null;
}

export interface ContractorTimeOffTable {
  id: string;
  contractor_id: string;
  /** [start_at, end_at), UTC ISO text. */
  start_at: string;
  end_at: string;
  reason: string | null;
  /** `contractor:<id>` or `operator:<key id>`. */
  created_by: string;
  created_at: string;
  /** When it was removed; null while in force. */
  removed_at: string | null;
}

export interface QuotesTable {
  id: string;
  account_id: string;
  livemode: number;
  trade: string;
  state: string;
  zip: string | null;
  city: string | null;
  urgency: string;
  nte_cents: number | null;
  contractor_id: string | null;
  estimated_cost_cents: number;
  eta_tier: string | null;
  breakdown: string; // JSON
  created_at: string;
  expires_at: string;
}

/**
 * A work order's row. The domain's Order (domain/orders/order.ts) is read from it and written to it by
 * storage/order-rows.ts, the one mapping: livemode is 0/1 and the ranking JSON text here. A text column
 * whose values are a closed list is typed as that list (the writer writes only those). Columns added by
 * later migrations with a default are Generated: an insert may leave them out.
 */
export interface OrdersTable {
  id: string;
  account_id: string;
  livemode: number;
  status: OrderStatus;
  trade: TradeCode;
  urgency: Urgency;
  state: string;
  zip: string | null;
  city: string | null;
  address: string | null;
  location_name: string | null;
  description: string;
  nte_cents: number | null;
  callback_url: string | null;
  reference_id: string | null;
  contractor_id: string | null;
  estimated_cost_cents: number;
  currency: string;
  eta_tier: EtaTier | null;
  match_score: number | null;
  received_at: string;
  matched_at: string | null;
  dispatch_latency_ms: number | null;
  created_at: string;
  updated_at: string;
  /** JSON array of contractor ids, best first. */
  ranking: string | null;
  accepted_at: string | null;
  eta_at: string | null;
  /** Migration 0013. */
  on_site_at: string | null;
  /** JSON text of the domain's SiteCheck (migration 0031). */
  check_in: string | null;
  check_out: string | null;
  completed_at: string | null;
  final_cost_cents: number | null;
  status_reason: string | null;
  nte_approved_cents: number | null;
  invoice_cents: number | null;
  invoiced_at: string | null;
  /** Migration 0008; defaults to 0. */
  override_count: Generated<number>;
  matching_time_ms: number | null;
  first_accepted_at: string | null;
  offers_made: number;
  offers_declined: number;
  offers_expired: number;
  accepted_offer_attempt: number | null;
  manual_dispatch_count: number;
  redispatch_count: number;
  /** Migration 0017. */
  time_zone: string | null;
  window_start: string | null;
  window_end: string | null;
  window_source: WindowSource | null;
  respond_by: string | null;
  arrive_by: string | null;
  /** Migration 0020. */
  sla_respond_at_risk_at: string | null;
  sla_respond_breached_at: string | null;
  sla_arrive_at_risk_at: string | null;
  sla_arrive_breached_at: string | null;
  /** Migration 0037: the order this one is a recall of. */
  recall_of: string | null;
  /** Migration 0010; defaults to 0. */
  version: Generated<number>;
  /** Migration 0038: the price an accepted counter-offer agreed. */
  agreed_price_cents: number | null;
}

/** An offer's row (the domain's Offer with livemode 0/1: storage/order-rows.ts). */
export interface OffersTable {
  id: string;
  order_id: string;
  contractor_id: string;
  livemode: number;
  attempt: number;
  status: OfferStatus;
  offered_at: string;
  deadline_at: string;
  responded_at: string | null;
  reason: string | null;
}

/** An NTE request's row: the domain's NteRequest as it is (no column needs mapping). */
interface NteRequestsTable {
  id: string;
  order_id: string;
  contractor_id: string;
  requested_cents: number;
  reason: string;
  status: NteRequestStatus;
  created_at: string;
  decided_at: string | null;
  decision_reason: string | null;
}

/** One version of a job's itemised invoice (migration 0035): its lines as JSON text (domain/orders/invoice.ts). */
export interface InvoiceVersionsTable {
  order_id: string;
  version: number;
  lines: string;
  subtotal_cents: number;
  tax_cents: number;
  total_cents: number;
  created_at: string;
  created_by: string;
}

/** The account's decisions on an invoice (migration 0039). */
export interface InvoiceDecisionsTable {
  id: string;
  order_id: string;
  version: number;
  decision: string;
  total_cents: number;
  reason_code: string | null;
  note: string | null;
  payment_reference: string | null;
  paid_on: string | null;
  decided_at: string;
  decided_by: string;
}

/** An account's invoice policy per mode (migration 0039). */
interface InvoicePoliciesTable {
  account_id: string;
  livemode: number;
  auto_approve_below_cents: number | null;
  updated_at: string;
  updated_by: string;
  seal: string;
}

/** An account's rating of a completed order, one per order (migration 0036). */
export interface OrderRatingsTable {
  order_id: string;
  account_id: string;
  livemode: number;
  contractor_id: string;
  quality: number;
  timeliness: number;
  communication: number;
  value: number;
  comment: string | null;
  created_at: string;
  /** `key:<key id>` of the account key that rated it first, and last. */
  created_by: string;
  updated_at: string;
  updated_by: string;
  /** How many times it was changed after it was first given. */
  edits: number;
  /** The seal of the audit record of its last change (order.rated). */
  seal: string;
}

/** One unit of a contractor's capacity an order holds (migration 0011). */
export interface CapacityHoldsTable {
  order_id: string;
  contractor_id: string;
  taken_at: string;
  /** The block of time the unit holds (migration 0022; null on rows taken before it, or without a time). */
  starts_at?: string | null;
  ends_at?: string | null;
  lat?: number | null;
  lon?: number | null;
}

export interface IdempotencyKeysTable {
  account_id: string;
  livemode: number;
  idem_key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  order_id: string | null;
  created_at: string;
  expires_at: string;
}

interface AuditRecordsTable extends Omit<AuditRecordRow, "seq"> {
  seq: Generated<number>;
}

interface AuditPendingTable {
  id: Generated<number>;
  seal: string;
  leaf_hash: string;
}

interface AuditLeavesTable {
  leaf_index: number;
  seal: string;
  leaf_hash: string;
  integrated_at: string;
}

interface AuditNodesTable {
  level: number;
  idx: number;
  hash: string;
}

/** A complete subtree of 256 leaves: its levels 0 to 7 (audit/merkle.ts buildTile), raw bytes. */
interface AuditTilesTable {
  idx: number;
  hashes: Buffer;
}

type AuditCheckpointsTable = AuditCheckpointRow;

type AuditLegalHoldsTable = LegalHoldRow;

export interface WebhookSecretsTable {
  id: string;
  account_id: string;
  livemode: number;
  /** whsec_ + base64 of 32 random bytes: kept as is, since signing needs it (shown once, at creation). */
  secret: string;
  created_at: string;
  /** Null while current; the end of the overlap once rotated. */
  expires_at: string | null;
}

type WebhookEndpointStatus = "enabled" | "disabled";

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  livemode: number;
  url: string;
  /** 1: the account's default endpoint (at most one per account and mode); 0: an order's callback_url. */
  is_default: number;
  status: WebhookEndpointStatus;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One change of an order, as the live event stream resumes from it (migration 0015). */
export interface OrderEventsTable {
  /** Increases in commit order: the stream's event id. */
  id: Generated<number>;
  type: string;
  order_id: string;
  account_id: string;
  livemode: number;
  contractor_id: string | null;
  previous_contractor_id: string | null;
  created_at: string;
  /** JSON: { order, details, offer } (operations/orders/event-log.ts). */
  payload: string;
}

export interface WebhookEventsTable {
  /** The Standard Webhooks message id (msg_...): the webhook-id header, stable across retries. */
  id: string;
  account_id: string;
  livemode: number;
  order_id: string;
  type: string;
  created_at: string;
  /** The order's callback_url when the event was written. */
  callback_url: string | null;
  /** The envelope, exactly as every attempt sends it. */
  payload: string;
  fanned_out: number;
}

export type WebhookDeliveryStatus = "pending" | "succeeded" | "failed" | "cancelled";

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  livemode: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  /** Set while a worker holds the delivery; a worker that died lets it lapse and another takes over. */
  lease_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** succeeded, retrying, failed (schedule exhausted or 410), or skipped (endpoint disabled, no secret...). */
  outcome: string;
  next_attempt_at: string | null;
}

/** One row per once-a-day job run: which job, which UTC day (YYYY-MM-DD), which mode. */
interface DailyRunsTable {
  job: string;
  day: string;
  livemode: number;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  console_sessions: ConsoleSessionsTable;
  offers: OffersTable;
  capacity_holds: CapacityHoldsTable;
  nte_requests: NteRequestsTable;
  invoice_versions: InvoiceVersionsTable;
  invoice_decisions: InvoiceDecisionsTable;
  invoice_policies: InvoicePoliciesTable;
  order_ratings: OrderRatingsTable;
  contractors: ContractorsTable;
  quotes: QuotesTable;
  orders: OrdersTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_records: AuditRecordsTable;
  audit_pending: AuditPendingTable;
  audit_leaves: AuditLeavesTable;
  audit_nodes: AuditNodesTable;
  audit_tiles: AuditTilesTable;
  audit_checkpoints: AuditCheckpointsTable;
  audit_legal_holds: AuditLegalHoldsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  order_events: OrderEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  daily_runs: DailyRunsTable;
  contractor_time_off: ContractorTimeOffTable;
  schedule_proposals: ScheduleProposalsTable;
  attachments: AttachmentsTable;
  proof_requirements: ProofRequirementsTable;
  do_not_dispatch: DoNotDispatchTable;
  blobs: BlobsTable;
  blob_chunks: BlobChunksTable;
  partial_uploads: PartialUploadsTable;
  upload_chunks: UploadChunksTable;
  checklist_templates: ChecklistTemplatesTable;
  order_checklists: OrderChecklistsTable;
  checklist_answers: ChecklistAnswersTable;
  counter_offers: CounterOffersTable;
  counter_policies: CounterPoliciesTable;
  maintenance_plans: MaintenancePlansTable;
  plan_occurrences: PlanOccurrencesTable;
  sites: SitesTable;
  assets: AssetsTable;
  order_sites: OrderSitesTable;
  order_assets: OrderAssetsTable;
  tracking_links: TrackingLinksTable;
  request_links: RequestLinksTable;
  requests: RequestsTable;
  request_policies: RequestPoliciesTable;
  notification_events: NotificationEventsTable;
  notifications: NotificationsTable;
  notification_attempts: NotificationAttemptsTable;
  notification_opt_outs: NotificationOptOutsTable;
  notification_subscribers: NotificationSubscribersTable;
  request_photos: RequestPhotosTable;
}

/** A photo sent with a request (migration 0045): its bytes and thumbnail in the blob store. */
export interface RequestPhotosTable {
  request_id: string;
  /** 1 or 2. */
  position: number;
  sha256: string;
  size: number;
  media_type: string;
  thumbnail_sha256: string | null;
  created_at: string;
}

/** A site's request link (migration 0045; operations/requests/). The token is not stored: it is the id and
 * an HMAC of it under the request links' secret (auth/tracking-tokens.ts). */
export interface RequestLinksTable {
  id: string;
  site_id: string;
  account_id: string;
  livemode: number;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
  revoked_by: string | null;
  /** The seal of the request.link_issued record. */
  seal: string;
}

/** A request reported at a site (migration 0045; domain/requests/). */
export interface RequestsTable {
  id: string;
  account_id: string;
  livemode: number;
  site_id: string;
  /** The request link it came through; null for one the account's agent created. */
  link_id: string | null;
  source: "form" | "agent";
  description: string;
  urgency: "emergency" | "urgent" | "routine";
  reporter_name: string;
  reporter_contact: string;
  /** The keyword model's guess (domain/requests/trade-model.ts); null when it made none. */
  guessed_trade: TradeCode | null;
  /** The guess's confidence in thousandths (0 when it made none). */
  guess_confidence_pm: number;
  /** The trade the order was created or linked with (the guess, or the approver's). */
  trade: TradeCode | null;
  status: "pending" | "ordered" | "linked" | "rejected";
  order_id: string | null;
  /** Why it was rejected, or held (the model's or the policy's reason). */
  reason: string | null;
  decided_by: string | null;
  decided_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  /** The seal of the request.received record. */
  seal: string;
  /** The seal of its outcome's record (request.ordered, .linked, .rejected). */
  decision_seal: string | null;
}

/** An account's request policy in a mode (migration 0045); no row: hold. */
export interface RequestPoliciesTable {
  account_id: string;
  livemode: number;
  mode: "create" | "hold";
  updated_at: string;
  updated_by: string;
  seal: string;
}

/** The notifications' outbox (migration 0044): a notifiable change of an order, written in its transaction. */
export interface NotificationEventsTable {
  id: string;
  account_id: string;
  livemode: number;
  order_id: string;
  /** The order event (order.accepted, ...): domain/notifications/events.ts names its kind. */
  event: string;
  created_at: string;
  fanned_out: number;
}

export type NotificationStatus = "pending" | "sent" | "kept" | "failed" | "cancelled";

/** One message of a notification event to one recipient (migration 0044). */
export interface NotificationsTable {
  id: string;
  event_id: string;
  /** The message this one resends; null for the event's own. */
  resend_of: string | null;
  account_id: string;
  livemode: number;
  order_id: string;
  /** The notification's kind (booked, en_route, arrived, completed, rescheduled, cancelled). */
  event: string;
  recipient: string;
  recipient_role: "site_contact" | "subscriber";
  status: NotificationStatus;
  attempts: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  /** The Message-ID header, <id@host>: the same on every attempt. */
  message_id: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** SHA-256 of the rendered message (what notification.sent seals, never the body). */
  digest: string;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** The seal of its notification.sent record, once sent or kept. */
  seal: string | null;
}

export interface NotificationAttemptsTable {
  id: string;
  notification_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  outcome: "sent" | "kept" | "retrying" | "failed" | "cancelled";
  /** The SMTP server's answer (sent), when there is one. */
  response: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

interface NotificationOptOutsTable {
  account_id: string;
  livemode: number;
  /** Lower case. */
  email: string;
  created_at: string;
  /** "link": the message's unsubscribe link; "api": the account. */
  source: string;
}

export interface NotificationSubscribersTable {
  account_id: string;
  livemode: number;
  /** Lower case. */
  email: string;
  /** JSON array of the kinds the person wants. */
  events: string;
  created_at: string;
  /** The seal of the notification.subscribers_set record that set the list. */
  seal: string;
}

/** A tracking link of an order (migration 0043; operations/tracking/). The token is not stored: it is the
 * id and an HMAC of it (auth/tracking-tokens.ts). */
export interface TrackingLinksTable {
  id: string;
  order_id: string;
  account_id: string;
  livemode: number;
  created_at: string;
  created_by: string;
  /** Set when issued for a closed order; else null, and computed from the order's closing time. */
  expires_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  /** The seal of the tracking.link_issued record. */
  seal: string;
}

/** A maintenance plan (migration 0042; domain/maintenance/plan.ts). */
export interface MaintenancePlansTable {
  id: string;
  livemode: number;
  account_id: string;
  site_id: string;
  asset_id: string | null;
  trade: string;
  name: string;
  description: string;
  checklist_template_id: string | null;
  duration_minutes: number;
  recurrence: string;
  /** JSON: local dates (YYYY-MM-DD) skipped. */
  exceptions: string;
  starts_on: string;
  /** JSON: the preferred window { days, start, end }. */
  window: string;
  horizon_days: number;
  nte_cents: number | null;
  status: string;
  version: number;
  /** Occurrences whose window starts before this instant have been generated (null: none yet). */
  generated_until: string | null;
  /** When the plan is generated again (its horizon moved on by a day); null: at once. */
  refresh_at: string | null;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  seal: string;
}

/** An occurrence of a plan acted on: generated, skipped or failed (migration 0042). */
export interface PlanOccurrencesTable {
  plan_id: string;
  occurrence_key: string;
  livemode: number;
  account_id: string;
  site_id: string;
  asset_id: string | null;
  window_start: string;
  window_end: string;
  state: string;
  order_id: string | null;
  reason: string | null;
  /** JSON: { start, end }, the window before a move. */
  moved_from: string | null;
  overdue_at: string | null;
  created_at: string;
  updated_at: string;
  seal: string;
}

/** A contractor's counter to an offer (migration 0038; the domain's CounterOffer with livemode 0/1). */
export interface CounterOffersTable {
  offer_id: string;
  order_id: string;
  contractor_id: string;
  livemode: number;
  price_cents: number | null;
  window_start: string | null;
  window_end: string | null;
  note: string | null;
  status: CounterStatus;
  created_at: string;
  deadline_at: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
}

/** An account's policy on counter-offers in one mode (migration 0038). */
interface CounterPoliciesTable {
  account_id: string;
  livemode: number;
  auto_accept_within_pct: number | null;
  updated_at: string;
  updated_by: string;
  seal: string;
}

/** What an account requires before its jobs of one mode are completed (migration 0033). */
interface ProofRequirementsTable {
  account_id: string;
  livemode: number;
  signature_required: number;
  photo_required: number;
  updated_at: string;
  updated_by: string;
  seal: string;
}

/** An account's do-not-dispatch entry in one mode (migration 0034); kept when removed (removed_at set). */
export interface DoNotDispatchTable {
  id: string;
  account_id: string;
  livemode: number;
  contractor_id: string;
  /** JSON array of trade codes; null: every trade. */
  trades: string | null;
  reason: string;
  created_at: string;
  created_by: string;
  seal: string;
  removed_at: string | null;
  removed_by: string | null;
  removal_reason: string | null;
}

/** A checklist template (migration 0030): the service's (account_id null) or an account's, for one trade. */
export interface ChecklistTemplatesTable {
  id: string;
  livemode: number;
  account_id: string | null;
  trade: string;
  name: string;
  replaces_service: number;
  /** JSON: the items. */
  items: string;
  created_at: string;
  created_by: string;
  retired_at: string | null;
  retired_by: string | null;
}

/** An order's checklist, fixed once (migration 0030). */
export interface OrderChecklistsTable {
  order_id: string;
  /** JSON: the templates' ids. */
  template_ids: string;
  /** JSON: the items, each with its template_id. */
  items: string;
  fixed_at: string;
}

/** The answer to one item of an order's checklist (migration 0030). */
export interface ChecklistAnswersTable {
  order_id: string;
  item_id: string;
  /** JSON: a boolean, a number or a string. */
  value: string;
  answered_at: string;
  answered_by: string;
  seal: string;
}

/** An order's attachment (migration 0029): its blob, what it is, who sent it, and the seal of its record. */
export interface AttachmentsTable {
  id: string;
  order_id: string;
  livemode: number;
  sha256: string;
  /** bigint: PostgreSQL's driver reads it as text. */
  size: number | string;
  media_type: string;
  kind: string;
  caption: string | null;
  filename: string | null;
  uploader: string;
  created_at: string;
  thumbnail_sha256: string | null;
  /** A signature's signer, as printed (migration 0033); null for other kinds. */
  signer_name: string | null;
  seal: string;
}

/** A blob of the chunked blob store (PostgreSQL's; migration 0029). */
interface BlobsTable {
  sha256: string;
  size: number | string;
  created_at: string;
}

interface BlobChunksTable {
  sha256: string;
  idx: number;
  data: Uint8Array;
}

export interface ScheduleProposalsTable {
  id: string;
  livemode: number;
  created_at: string;
  expires_at: string;
  hash: string;
  body: string;
  basis: string;
  applied_at: string | null;
  /** JSON object: contractor id -> fingerprint of what the plan relied on (migration 0023); null before. */
  contractor_basis?: string | null;
}

/** A resumable (tus) upload on its way (migration 0032): whose, to which order, how far it has come. */
export interface PartialUploadsTable {
  id: string;
  order_id: string;
  uploader: string;
  size: number | string;
  upload_offset: number | string;
  /** The tus Upload-Metadata the client sent, as JSON. */
  metadata: string;
  created_at: string;
  finishing_at: string | null;
  attachment_id: string | null;
}

/** Bytes of a partial upload from `start` (migration 0032). */
interface UploadChunksTable {
  upload_id: string;
  start: number | string;
  data: Uint8Array;
}

/** An account's site (migration 0041; the domain's Site, livemode 0/1, its contact in three columns). */
export interface SitesTable {
  id: string;
  account_id: string;
  livemode: number;
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  time_zone: string;
  hours: string;
  access_notes: string | null;
  contact_name: string | null;
  contact_phone: string | null;
  contact_email: string | null;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  archived_at: string | null;
  seal: string;
}

/** An asset at a site (migration 0041): its tags as JSON text, serial_key its serial as compared. */
export interface AssetsTable {
  id: string;
  site_id: string;
  account_id: string;
  livemode: number;
  trade: string;
  type: string;
  make: string | null;
  model: string | null;
  serial: string | null;
  serial_key: string | null;
  installed_on: string | null;
  warranty_ends_on: string | null;
  tags: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  archived_at: string | null;
  seal: string;
}

/** The site an order names (migration 0041): a row only for an order that names one. */
interface OrderSitesTable {
  order_id: string;
  site_id: string;
}

/** An asset an order names (migration 0041). */
interface OrderAssetsTable {
  order_id: string;
  asset_id: string;
}
