// The closed list of audit event kinds: every decision the service records is one of these. A new kind
// is added here, with what its `data` holds, before anything can record it. An order's kinds are listed
// by its commands' domain (domain/orders/order.ts ORDER_AUDIT_KINDS): each must be described here.

import type { OrderAuditKind } from "../domain/orders/order.js";

/** What each audit kind of an order's commands records. */
const ORDER_KINDS = {
  "order.created":
    "A work order was accepted: its inputs as received, its idempotency key and reference, and for a recall the earlier order it recalls (recall_of). The caller's contact details and bookkeeping (callback_url, reference_id, idempotency_key, the location's address and name) are disclosures for the caller and the dispatch team: a contractor reads the job as its offer shows it.",
  "order.matched":
    "A contractor was matched to an order: the ranked candidates with their scores, the one chosen (recall_first: true when a recall was offered first to the contractor of the job it recalls, whatever its rank), and how long the in-memory match took (matching_time_ms; records written before migration 0012 carry dispatch_latency_ms instead, the time from the request's arrival to that in-memory pick).",
  "order.unmatched":
    "No eligible contractor: the order waits for a dispatcher; how many were considered and why they were rejected.",
  "order.offered":
    "The job was offered to the next contractor in the ranking after a decline or an expired offer: the offer and its deadline.",
  "order.offer_declined": "A contractor declined the offer, with its reason if given.",
  "order.offer_expired": "An offer's deadline passed without an answer.",
  "order.needs_dispatcher": "The cascade ran out of contractors: the order waits for a dispatcher.",
  "order.accepted": "The contractor offered the job accepted it.",
  "order.status_changed":
    "The contractor reported progress: en_route (with its ETA), on_site (its check-in), completed (its check-out, with the final cost) or cannot_complete (with a reason); a check-in and a check-out carry site_check: the phone's position and accuracy if given, the site's point, the distance and whether it was flagged as far from the site.",
  "order.cancelled": "The order was cancelled: by whom, from which status, and why.",
  "order.nte_requested": "The contractor on the job asked for a higher NTE: how much, and why.",
  "order.nte_decided": "The caller approved or rejected an NTE increase: the request, the decision, and why.",
  "order.invoiced":
    "The contractor invoiced the job, within the NTE in force: the amount (invoice_cents), and for an itemised invoice its version 1, lines (each with the amount the service computed), subtotal, tax and total.",
  "order.invoice_revised":
    "The contractor revised its invoice before approval, within the NTE in force: the new version's number, lines, subtotal, tax and total, and the previous total.",
  "order.invoice_decided":
    "The account decided the contractor's invoice: approved (by an approver within its approval limit, named, or by the account's auto-approval policy, with its threshold and the invoice's flags), rejected with a reason code, or sent back for a revision; the version and total decided, and the note.",
  "order.invoice_paid":
    "The account recorded its payment of the approved invoice: the version and total paid, the payment reference and the date paid (the service records payments; it does not move money).",
  "order.assigned":
    "A dispatcher assigned a contractor by hand (from offered, needs_dispatcher or cannot_complete) or reassigned the job (from accepted or en_route): the status it was made from, from whom to whom, and why.",
  "order.sla_at_risk":
    "A service-level clock of the order is at risk (80 % of its time used with its step not done, or the contractor's ETA after its deadline): the clock (respond or arrive), why, its start and deadline, the time allowed and used, the ETA, and the order's status.",
  "order.sla_breached":
    "A service-level clock of the order passed its deadline with its step not done (or done late): the clock, its start and deadline, the time allowed and used, the ETA, and the order's status.",
  "order.maintenance_overdue":
    "A planned order's occurrence is overdue: the window of the maintenance plan's occurrence it was generated for ended with the order not done (plan_id, occurrence_key, the window, and the order's status). Once per order; the status does not change.",
  "order.rescheduled":
    "A dispatcher moved the order's arrival window: the window before and after, the contractor holding or offered the job (which keeps it, placed again in the new window), and why.",
  "order.countered":
    "The contractor offered the job answered with a counter-offer before the offer's deadline: the offer, the price (price_cents) and/or arrival window it proposes, its note, and the deadline by which the account answers (its capacity stays held until then).",
  "order.counter_accepted":
    "A counter-offer was accepted, by the account's key or by its policy (actor system:counter-policy, with the policy's auto_accept_within_pct, the band and the NTE in force it was judged against): the contractor holds the job at the counter's price (agreed_price_cents) and/or window; an accepted price above the NTE in force raises it to that price (nte_raised_from_cents).",
  "order.counter_declined":
    "The account declined a counter-offer, with its reason if given: the contractor's capacity is given back and the job goes to the next contractor in the ranking (or to a dispatcher).",
  "order.counter_expired":
    "A counter-offer's deadline passed without the account's answer: as a decline, the job goes to the next contractor (or to a dispatcher).",
} as const satisfies Record<OrderAuditKind, string>;

const AUDIT_KINDS = {
  "quote.issued":
    "A quote: its inputs, the price breakdown, the candidates considered with their scores and the one chosen.",
  ...ORDER_KINDS,
  "order.attachment_added":
    "A photo or PDF was added to an order (proof of work): its id, kind, sniffed media type, the SHA-256 and size of the stored file (an image without its metadata) and of the file as received, its thumbnail's SHA-256, its caption, the uploader's role, and what the photo's EXIF claimed: captured_at (DateTimeOriginal, local time) and captured_position (GPS latitude and longitude, a disclosure for the account and the dispatch team).",
  "account.proof_requirements_set":
    "An account set what its jobs of one mode need before completion (proof of work): signature_required, photo_required, and the previous values.",
  "account.invoice_policy_set":
    "An account set its invoice policy for one mode: auto_approve_below_cents (an invoice with no flagged check below it is approved at once; null: never) and the previous value.",
  "account.counter_policy_set":
    "An account set its policy on counter-offers in one mode: auto_accept_within_pct (counters at most that many percent above the estimate, and within the NTE in force, accepted at once; null: none), and the previous value.",
  "plan.created":
    "An account created a maintenance plan: its site (and asset), trade, name, description, checklist template, duration, recurrence rule, exceptions, start date, preferred window in the site's time zone, horizon and NTE.",
  "plan.updated":
    "An account changed a maintenance plan: the fields changed, their previous values and the new version. Occurrences already generated keep their orders; the rest follow the plan as changed.",
  "plan.archived": "An account archived a maintenance plan: no occurrence is generated from it any more.",
  "plan.occurrence_generated":
    "A maintenance plan's occurrence became a work order, in the order's own transaction (once: the plan and the occurrence's key claim it): the plan, the key (the rule's date), the window and the order.",
  "plan.occurrence_failed":
    "A maintenance plan's occurrence could not become a work order (no contractor can take its window, or the window is refused): the plan, the key, the window and the reason. The account moves or skips it.",
  "plan.occurrence_skipped":
    "An account skipped a maintenance plan's occurrence, with its reason (and cancelled its order, if it had one).",
  "plan.occurrence_moved":
    "An account moved a maintenance plan's occurrence to another window, with its reason: the window before and after (its order rescheduled, or created at the new window).",
  "account.do_not_dispatch_added":
    "An account excluded a contractor from its work of one mode (do-not-dispatch): the entry's id, the contractor (its id a disclosure for the dispatch team, the account's handle for the account), the trades (null: every trade) and the account's reason. Account-level: never shown to a contractor.",
  "account.do_not_dispatch_removed":
    "An account took an entry off its do-not-dispatch list: the entry's id, the contractor (as above) and why.",
  "order.rated":
    "The account rated a completed order (or changed its rating, within 14 days of the first): quality, timeliness, communication and value (1-5), their mean (overall), the comment (null: none), which change it is (edit: 0 for the first rating) and the previous scores and comment (null for the first). It names no contractor, so a contractor's view of the order's records leaves it out: a contractor reads its ratings only as a whole.",
  "order.checklist_answered":
    "The contractor on the job answered an item of the order's checklist (or changed its answer; each answer has its record): the item's id, label, kind and template, the value (a yes/no, a number with its unit, a text, or a photo's attachment_id), and the contractor.",
  "schedule.applied":
    "A dispatcher applied a day optimiser's proposal: its id and SHA-256 hash, the day, and each assignment it made (or that was refused, with the reason); each assignment also has its own order.assigned record.",
  "pool.changed": "A dispatcher activated, deactivated, excluded or re-included a contractor, and why.",
  "pool.time_off_added":
    "A contractor (or a dispatcher for it) added a period of time off to its calendar: the period [start, end) and why.",
  "pool.time_off_removed":
    "A contractor's period of time off was removed, by it or by a dispatcher, and why.",
  "pool.compliance_expiring":
    "The day's compliance list of a pool (one per UTC day and mode): the contractors whose insurance or license has expired, is not verified, or expires within 45 days, with their dates.",
  "key.issued":
    "An API key was issued: its id, account, mode, label and rate-limit overrides (never the key).",
  "key.revoked": "An API key was revoked.",
  "key.role_set":
    "An account key's role was set (requester, approver with its approval limit in cents, or admin), by an admin key or an operator: the key, the role and limit, and the ones before.",
  "pool.seeded":
    "The sandbox contractor pool was generated: how many contractors and a digest of the pool; or, once, a pool seeded before verification dates got them (verification_dates_backfilled: how many), or before working hours (working_hours_backfilled: how many); or the sandbox's starter checklists were created, one service template per trade in test mode (checklist_templates: their ids, and checklist_templates_sha256: a digest of their trades, names and items).",
  "site.created":
    "An account created a site: its id, and the site (name, address, city, state, ZIP, the time zone derived from them, opening hours, access notes), its contact (name, phone, email) a disclosure for the account and the dispatch team.",
  "site.updated":
    "An account changed a site (the changes apply to orders made after): its id, the fields changed and the site as it now is (its contact a disclosure, as above).",
  "site.archived":
    "An account archived a site: no new order may name it; its orders and assets' history stay readable.",
  "sites.imported":
    "An account imported sites from a CSV file: how many, their ids and a SHA-256 digest of the file (each site's details are in the file; its contacts are never sealed in the clear).",
  "asset.created":
    "An account recorded an asset at one of its sites: its id, the site, trade, type, make, model, serial, install date, warranty end and tags.",
  "asset.updated": "An account changed an asset: its id, the fields changed and the asset as it now is.",
  "asset.archived": "An account archived an asset: no new order may name it; its service history stays.",
  "tracking.link_issued":
    "An account issued the tracking link of one of its orders (/t/<token>: a public page of the job's progress, the technician's first name and trade, nothing else): the link's id (never its token) and the order. The token is the id with an HMAC under the server's secret; expiry follows the order's closing.",
  "tracking.link_revoked":
    "An account revoked an order's tracking link: the link's id, the order, and why (null: no reason given). Its page answers 404 from then on and its open streams end.",
  "request.link_issued":
    "An account issued a site's request link (/r/<token>: a public form whose submissions become requests): the link's id (never its token) and the site.",
  "request.link_rotated":
    "An account rotated a site's request link: the old link's id (its form answers 404 from then on), the new one's and the site.",
  "request.received":
    "A request was reported at a site, through its request form or by the account's agent: its id, the site, the source, the urgency, the keyword model's guess and confidence, and a SHA-256 digest of the text, name and contact (not the text itself).",
  "request.ordered":
    "A request became a work order: the request, the order, the trade used (the guess, or the approver's) and who decided (the account's policy or a key).",
  "request.linked":
    "A request was linked to an open order at the same site and trade, rather than doubled: the request, the order and the trade.",
  "request.rejected": "An account rejected a request: the request and why.",
  "request.policy_set":
    "An account set its request policy: create (a confident request becomes an order at once) or hold (every request waits for approval).",
  "notification.sent":
    "A notification to the people at a site was sent through SMTP (status sent) or kept in the store with no SMTP server (status kept): the message's id and Message-ID, its kind (booked, en_route, arrived, completed, rescheduled, cancelled), whom it went to (site_contact or subscriber, never the address), the message it resends if any, and the SHA-256 digest of the rendered message (subject, text and HTML), never its body.",
  "notification.subscribers_set":
    "An account set its people who receive its orders' notifications: how many, and a SHA-256 digest of their addresses and kinds (never the addresses).",
  "notification.resent":
    "An account asked for a notification to be sent again: the message resent and the new message's id (sealed notification.sent in its turn).",
  "pool.imported":
    "Contractors were imported into a pool (pool: live or sandbox; a live record for the live pool): how many were added and updated, and a digest of the file.",
} as const;

export type AuditKind = keyof typeof AUDIT_KINDS;

export const AUDIT_KIND_LIST = Object.keys(AUDIT_KINDS) as AuditKind[];
