// Trust signals beside the order figures: the audit log's size and latest signed checkpoint, the
// vendor-trust posture published, and the share of the live pool with insurance and license verified.

import type { z } from "zod";
import type { Config } from "../../../config.js";
import type { ActiveContractors } from "../../../storage/evals-store.js";
import type { checkpointSchema } from "../../audit/attest.js";
import { ratio } from "./measures.js";
import type { Entry, Provenance } from "./provenance.js";

/** The vendor-trust document's posture fields and the settings behind them (documents.ts publishes them). */
export const VENDOR_FIELDS = {
  vendor: "VENDOR_NAME",
  contact_email: "VENDOR_CONTACT_EMAIL",
  license: "VENDOR_LICENSE",
  bond: "VENDOR_BOND",
  insurance: "VENDOR_INSURANCE",
  sla: "VENDOR_SLA",
} as const;
export type VendorField = keyof typeof VENDOR_FIELDS;
export const VENDOR_FIELD_NAMES = Object.keys(VENDOR_FIELDS) as [VendorField, ...VendorField[]];

/** The audit log as one computation saw it: the whole log, every account and mode. */
export interface AuditLogState {
  records: number;
  sequenced: number;
  checkpoint: z.input<typeof checkpointSchema> | null;
}

export function auditLogFigure(audit: AuditLogState, baseUrl: string) {
  return {
    records: audit.records,
    sequenced: audit.sequenced,
    latest_checkpoint: audit.checkpoint,
    checkpoint_url: `${baseUrl}/api/attest/checkpoint`,
  };
}

export function vendorTrustFigure(
  config: Pick<Config, (typeof VENDOR_FIELDS)[VendorField]>,
  baseUrl: string,
) {
  const vendor = (published: boolean) =>
    VENDOR_FIELD_NAMES.filter((f) => (config[VENDOR_FIELDS[f]] !== undefined) === published);
  return {
    document: `${baseUrl}/.well-known/vendor-trust.json`,
    published: vendor(true),
    not_published: vendor(false),
  };
}

export function contractorVerification({ active, verified, dated }: ActiveContractors) {
  const status = active === 0 ? "no_contractors" : dated === 0 ? "not_measured" : "measured";
  return {
    status,
    active_live_contractors: active,
    with_verification_dates: dated,
    verified_insurance_and_license:
      status === "measured" ? ratio(verified, active) : { value: null, sample_size: active, unit: "ratio" },
  } as const;
}

export function trustSignalsProvenance(
  audit: AuditLogState,
  contractors: ActiveContractors,
  p: Entry,
): Provenance {
  return {
    "trust_signals.audit_log": p(
      "audit log: latest signed checkpoint and the queue of records not yet sequenced",
      "records = checkpoint tree_size + queued records",
      audit.records,
      "The whole log: every account, live and sandbox records alike (sandbox_excluded is about the order figures).",
    ),
    "trust_signals.vendor_trust": p(
      "service configuration (VENDOR_* settings), as published in /.well-known/vendor-trust.json",
      "a field is published when its setting is given",
      null,
    ),
    "trust_signals.contractor_verification": p(
      "contractors table, live pool, active = 1 and excluded = 0: insurance_verified_until and license_verified_until (from the pool file)",
      "count(both verified through today, UTC) / count(*); not_measured when no such contractor has either date",
      contractors.active,
      "Verification dates come from the pool file we are given; a share is published only when at least one contractor has one.",
    ),
  };
}
