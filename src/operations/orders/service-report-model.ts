// The service report's content (issue 32): what a completed order's PDF says, as plain values built from
// the order, its attachments and its audit records, with no I/O and no package. The renderer
// (service-report-pdf.ts) lays it out; the operation (service-report.ts) reads what it is built from.
//
// check_in, check_out, checklist and signature are optional: the features that record them (check-in
// positions, checklists, signatures) fill them in where they read their rows, and the renderer prints a
// section for each one present.

import type { Order } from "../../domain/orders/order.js";
import type { SiteCheck } from "../../domain/orders/site-check.js";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import { TRADES } from "../../domain/trades.js";
import type { Attachment } from "../../storage/store.js";

/** Who the report is made for: what it may name of the other parties. */
type ReportAudience = "account" | "dispatcher";

/** A sealed audit record: its seal and where anyone checks it. */
export interface ReportSeal {
  seal: string;
  verify_url: string;
}

/** The contractor's check-in or check-out at the site (the check-in feature fills it). */
export interface ReportCheckPoint {
  at: string;
  position: { lat: number; lon: number; accuracy_m: number | null } | null;
  /** Distance from the site's point, when both are known. */
  distance_miles: number | null;
  /** Far from the site: accepted, and shown to the dispatch team. */
  flagged: boolean;
  seal?: ReportSeal | null;
}

/** An item of the job's checklist, as the report prints it. */
interface ReportChecklistItem {
  label: string;
  /** The answer as text (yes/no, a number, a text, the photo's attachment id); null when unanswered. */
  answer: string | null;
  unit: string | null;
}

/** The site contact's signature, as the report prints it. */
interface ReportSignature {
  signer_name: string;
  signed_at?: string | null;
  attachment_id: string;
  sha256: string;
  seal: ReportSeal;
}

/** One attachment, with the digest of its stored bytes and the record that seals it. */
export interface ReportArtifact {
  attachment_id: string;
  kind: "photo" | "document" | "signature";
  caption: string | null;
  filename: string | null;
  media_type: string;
  size: number;
  sha256: string;
  uploaded_by: "account" | "contractor";
  added_at: string;
  /** The thumbnail's blob (a WebP), printed as an image; null for a PDF. */
  thumbnail_sha256: string | null;
  seal: ReportSeal;
}

/** A moment of the job, with the record that sealed it when one is found. */
interface ReportTime {
  label: string;
  at: string | null;
  seal: ReportSeal | null;
}

export interface ServiceReport {
  order_id: string;
  livemode: boolean;
  audience: ReportAudience;
  /** The order's version the report was made from: a later change makes another report. */
  order_version: number;
  status: Order["status"];
  job: {
    trade: string;
    trade_name: string;
    urgency: string;
    description: string;
    location: {
      name: string | null;
      address: string | null;
      city: string | null;
      state: string;
      zip: string | null;
    };
    reference_id: string | null;
    /** The account: its id for the dispatch team; the account reading its own report needs none. */
    account_id: string | null;
    /** The contractor as the audience knows it: the account's handle (cref-...), the dispatch team's id. */
    contractor: string | null;
  };
  time_zone: string | null;
  times: ReportTime[];
  cost: {
    currency: string;
    estimated_cents: number;
    nte_cents: number | null;
    final_cost_cents: number | null;
    invoice_cents: number | null;
  };
  check_in?: ReportCheckPoint | null;
  check_out?: ReportCheckPoint | null;
  checklist?: { items: ReportChecklistItem[] } | null;
  signature?: ReportSignature | null;
  artifacts: ReportArtifact[];
  /** Where the report's own link and the verification links start. */
  base_url: string;
}

/** A record of the order's audit trail, as the audit store lists them. */
interface OrderRecordRef {
  seal: string;
  kind: string;
  created_at: string;
}

/** The statuses whose orders have a report: the work is done. */
export const REPORTED_STATUSES: readonly Order["status"][] = WORK_DONE_STATUSES;

export function hasReport(order: Pick<Order, "status">): boolean {
  return REPORTED_STATUSES.includes(order.status);
}

/** The report's path on this service (the transports make it absolute). */
export function reportPath(orderId: string): string {
  return `/api/orders/${orderId}/report`;
}

/** A seal as the report prints it. @public for the features that fill the optional sections. */
export function reportSeal(baseUrl: string, seal: string): ReportSeal {
  return { seal, verify_url: `${baseUrl}/api/attest/verify/${seal}` };
}

/** The record of `kinds` written at `at` (a change's record has the change's time), if there is one. */
function recordAt(
  records: readonly OrderRecordRef[],
  kinds: readonly string[],
  at: string | null,
  baseUrl: string,
): ReportSeal | null {
  if (at === null) return null;
  const found = records.findLast((r) => r.created_at === at && kinds.includes(r.kind));
  return found ? reportSeal(baseUrl, found.seal) : null;
}

const ACCEPTANCE_KINDS = ["order.accepted", "order.assigned"];
const PROGRESS_KINDS = ["order.status_changed"];

export interface ServiceReportInput {
  order: Order;
  attachments: readonly Attachment[];
  records: readonly OrderRecordRef[];
  audience: ReportAudience;
  /** The account's handle of the order's contractor (for an account's report). */
  contractorRef: string | null;
  /** The job's checklist with its answers, when it has one fixed. */
  checklist?: ReportChecklistItem[] | null;
  baseUrl: string;
}

/** A check-in or check-out as the report prints it, with the seal of the step's record. */
function checkPoint(check: SiteCheck | null, seal: ReportSeal | null): ReportCheckPoint | null {
  if (!check) return null;
  return {
    at: check.at,
    position: check.position,
    distance_miles: check.distance_miles,
    flagged: check.flagged,
    seal,
  };
}

/** The site contact's signature: the last one collected (a contractor may collect it again). */
function signatureOf(attachments: readonly Attachment[], baseUrl: string): ReportSignature | null {
  const signed = attachments.filter((a) => a.kind === "signature").at(-1);
  if (!signed) return null;
  return {
    signer_name: signed.signerName ?? "",
    signed_at: signed.createdAt,
    attachment_id: signed.id,
    sha256: signed.sha256,
    seal: reportSeal(baseUrl, signed.seal),
  };
}

/** The report of a completed (or invoiced) order, as `audience` may read it. */
export function serviceReportModel(input: ServiceReportInput): ServiceReport {
  const { order, records, baseUrl, audience } = input;
  const dispatcher = audience === "dispatcher";
  return {
    order_id: order.id,
    livemode: order.livemode,
    audience,
    order_version: order.version,
    status: order.status,
    job: {
      trade: order.trade,
      trade_name: TRADES[order.trade]?.name ?? order.trade,
      urgency: order.urgency,
      description: order.description,
      location: {
        name: order.location_name,
        address: order.address,
        city: order.city,
        state: order.state,
        zip: order.zip,
      },
      reference_id: order.reference_id,
      account_id: dispatcher ? order.account_id : null,
      contractor: dispatcher ? order.contractor_id : input.contractorRef,
    },
    time_zone: order.time_zone,
    times: [
      {
        label: "Ordered",
        at: order.created_at,
        seal: recordAt(records, ["order.created"], order.created_at, baseUrl),
      },
      {
        label: "Accepted",
        at: order.accepted_at,
        seal: recordAt(records, ACCEPTANCE_KINDS, order.accepted_at, baseUrl),
      },
      {
        label: "On site",
        at: order.on_site_at,
        seal: recordAt(records, PROGRESS_KINDS, order.on_site_at, baseUrl),
      },
      {
        label: "Completed",
        at: order.completed_at,
        seal: recordAt(records, PROGRESS_KINDS, order.completed_at, baseUrl),
      },
      ...(order.invoiced_at
        ? [
            {
              label: "Invoiced",
              at: order.invoiced_at,
              seal: recordAt(records, ["order.invoiced"], order.invoiced_at, baseUrl),
            },
          ]
        : []),
    ],
    cost: {
      currency: order.currency,
      estimated_cents: order.estimated_cost_cents,
      nte_cents: order.nte_approved_cents ?? order.nte_cents,
      final_cost_cents: order.final_cost_cents,
      invoice_cents: order.invoice_cents,
    },
    check_in: checkPoint(order.check_in, recordAt(records, PROGRESS_KINDS, order.on_site_at, baseUrl)),
    check_out: checkPoint(order.check_out, recordAt(records, PROGRESS_KINDS, order.completed_at, baseUrl)),
    signature: signatureOf(input.attachments, baseUrl),
    checklist: input.checklist && input.checklist.length > 0 ? { items: input.checklist } : null,
    artifacts: input.attachments.map((a) => ({
      attachment_id: a.id,
      kind: a.kind,
      caption: a.caption,
      filename: a.filename,
      media_type: a.mediaType,
      size: a.size,
      sha256: a.sha256,
      uploaded_by: a.uploader.startsWith("contractor:") ? "contractor" : "account",
      added_at: a.createdAt,
      thumbnail_sha256: a.thumbnailSha256,
      seal: reportSeal(baseUrl, a.seal),
    })),
    base_url: baseUrl,
  };
}
