// Numbered migrations, per dialect. The initial schema is dialect-neutral; later dialect-specific steps
// (triggers, for instance) get their own entries in each list.

import type { Migration, MigrationProvider } from "kysely";
import type { Dialect } from "../dialect.js";
import { migration0001 } from "./0001-initial.js";
import { migration0002 } from "./0002-contractor-capacity.js";
import { migration0003 } from "./0003-audit-log.js";
import { migration0004 } from "./0004-key-kinds.js";
import { migration0005 } from "./0005-offers.js";
import { migration0006 } from "./0006-nte.js";
import { migration0007 } from "./0007-webhooks.js";
import { migration0008 } from "./0008-evals.js";
import { migration0009 } from "./0009-contractor-verification.js";
import { migration0010 } from "./0010-order-version.js";
import { migration0011 } from "./0011-capacity-holds.js";
import { migration0012 } from "./0012-evals-figures.js";
import { migration0013 } from "./0013-contractor-directory.js";
import { migration0014 } from "./0014-audit-disclosures.js";
import { migration0015 } from "./0015-daily-runs.js";
import { migration0016 } from "./0016-order-events.js";
import { migration0017 } from "./0017-order-time.js";
import { migration0018 } from "./0018-console-sessions.js";
import { migration0019 } from "./0019-contractor-calendars.js";
import { migration0020 } from "./0020-sla-clocks.js";
import { migration0021 } from "./0021-schedule-proposals.js";
import { migration0022 } from "./0022-capacity-time.js";
import { migration0023 } from "./0023-proposal-contractor-basis.js";
import { migration0024 } from "./0024-order-indexes.js";
import { migration0025 } from "./0025-schedule-orders.js";
import { migration0026 } from "./0026-webhook-retention.js";
import { migration0027 } from "./0027-evals-sketches.js";
import { migration0028 } from "./0028-audit-tiles.js";
import { migration0029 } from "./0029-attachments.js";
import { migration0030 } from "./0030-checklists.js";
import { migration0031 } from "./0031-site-checks.js";
import { migration0032 } from "./0032-partial-uploads.js";
import { migration0033 } from "./0033-proof-requirements.js";
import { migration0034 } from "./0034-do-not-dispatch.js";
import { migration0035 } from "./0035-invoices.js";
import { migration0036 } from "./0036-ratings.js";
import { migration0037 } from "./0037-recalls.js";
import { migration0038 } from "./0038-counter-offers.js";
import { migration0039 } from "./0039-invoice-approvals.js";
import { migration0040 } from "./0040-invoice-exports.js";
import { migration0041 } from "./0041-sites.js";
import { migration0042 } from "./0042-maintenance-plans.js";
import { migration0043 } from "./0043-tracking-links.js";
import { migration0044 } from "./0044-notifications.js";
import { migration0045 } from "./0045-requests.js";
import { migration0046 } from "./0046-audit-order-index.js";
import { migration0047 } from "./0047-orders-status-index.js";
import { migration0048 } from "./0048-order-events-commit-order.js";
import { migration0049 } from "./0049-evals-recalls.js";

const MIGRATIONS: Record<Dialect, Record<string, Migration>> = {
  sqlite: {
    "0001-initial": migration0001,
    "0002-contractor-capacity": migration0002,
    "0003-audit-log": migration0003("sqlite"),
    "0004-key-kinds": migration0004,
    "0005-offers": migration0005,
    "0006-nte": migration0006,
    "0007-webhooks": migration0007,
    "0008-evals": migration0008("sqlite"),
    "0009-contractor-verification": migration0009,
    "0010-order-version": migration0010,
    "0011-capacity-holds": migration0011,
    "0012-evals-figures": migration0012("sqlite"),
    "0013-contractor-directory": migration0013("sqlite"),
    "0014-audit-disclosures": migration0014,
    "0015-daily-runs": migration0015,
    "0016-order-events": migration0016("sqlite"),
    "0017-order-time": migration0017,
    "0018-console-sessions": migration0018,
    "0019-contractor-calendars": migration0019,
    "0020-sla-clocks": migration0020,
    "0021-schedule-proposals": migration0021,
    "0022-capacity-time": migration0022,
    "0023-proposal-contractor-basis": migration0023,
    "0024-order-indexes": migration0024("sqlite"),
    "0025-schedule-orders": migration0025,
    "0026-webhook-retention": migration0026,
    "0027-evals-sketches": migration0027("sqlite"),
    "0028-audit-tiles": migration0028("sqlite"),
    "0029-attachments": migration0029("sqlite"),
    "0030-checklists": migration0030,
    "0031-site-checks": migration0031,
    "0032-partial-uploads": migration0032("sqlite"),
    "0033-proof-requirements": migration0033,
    "0034-do-not-dispatch": migration0034,
    "0035-invoices": migration0035,
    "0036-ratings": migration0036,
    "0037-recalls": migration0037,
    "0038-counter-offers": migration0038,
    "0039-invoice-approvals": migration0039("sqlite"),
    "0040-invoice-exports": migration0040,
    "0041-sites": migration0041,
    "0042-maintenance-plans": migration0042,
    "0043-tracking-links": migration0043,
    "0044-notifications": migration0044,
    "0045-requests": migration0045,
    "0046-audit-order-index": migration0046,
    "0047-orders-status-index": migration0047,
    "0048-order-events-commit-order": migration0048("sqlite"),
    "0049-evals-recalls": migration0049("sqlite"),
  },
  postgres: {
    "0001-initial": migration0001,
    "0002-contractor-capacity": migration0002,
    "0003-audit-log": migration0003("postgres"),
    "0004-key-kinds": migration0004,
    "0005-offers": migration0005,
    "0006-nte": migration0006,
    "0007-webhooks": migration0007,
    "0008-evals": migration0008("postgres"),
    "0009-contractor-verification": migration0009,
    "0010-order-version": migration0010,
    "0011-capacity-holds": migration0011,
    "0012-evals-figures": migration0012("postgres"),
    "0013-contractor-directory": migration0013("postgres"),
    "0014-audit-disclosures": migration0014,
    "0015-daily-runs": migration0015,
    "0016-order-events": migration0016("postgres"),
    "0017-order-time": migration0017,
    "0018-console-sessions": migration0018,
    "0019-contractor-calendars": migration0019,
    "0020-sla-clocks": migration0020,
    "0021-schedule-proposals": migration0021,
    "0022-capacity-time": migration0022,
    "0023-proposal-contractor-basis": migration0023,
    "0024-order-indexes": migration0024("postgres"),
    "0025-schedule-orders": migration0025,
    "0026-webhook-retention": migration0026,
    "0027-evals-sketches": migration0027("postgres"),
    "0028-audit-tiles": migration0028("postgres"),
    "0029-attachments": migration0029("postgres"),
    "0030-checklists": migration0030,
    "0031-site-checks": migration0031,
    "0032-partial-uploads": migration0032("postgres"),
    "0033-proof-requirements": migration0033,
    "0034-do-not-dispatch": migration0034,
    "0035-invoices": migration0035,
    "0036-ratings": migration0036,
    "0037-recalls": migration0037,
    "0038-counter-offers": migration0038,
    "0039-invoice-approvals": migration0039("postgres"),
    "0040-invoice-exports": migration0040,
    "0041-sites": migration0041,
    "0042-maintenance-plans": migration0042,
    "0043-tracking-links": migration0043,
    "0044-notifications": migration0044,
    "0045-requests": migration0045,
    "0046-audit-order-index": migration0046,
    "0047-orders-status-index": migration0047,
    "0048-order-events-commit-order": migration0048("postgres"),
    "0049-evals-recalls": migration0049("postgres"),
  },
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => MIGRATIONS[dialect] };
}
