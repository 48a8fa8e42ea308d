// Reading audit records, by role. Every reader gets the sealed record exactly as it hashes to its leaf
// (so it can check it against GET /api/attest/verify/{seal}) and the disclosures of its private parts
// that its role may see (audit/redaction.ts says which), with the record as it reads with them applied.
// - The caller (an account key): its own account's records, in the key's mode.
// - The dispatch team (a dispatcher key): every record of its mode, every disclosure.
// - A contractor (a contractor key): an order's records that name it, and the order's creation (the job
//   it was offered, without the caller's contact details), each with its own disclosures only.

import { z } from "zod";
import { applyDisclosures } from "../../audit/disclosure.js";
import { AUDIT_KIND_LIST, type AuditKind } from "../../audit/kinds.js";
import { ALL_ACCOUNTS, type AuditRecordRow } from "../../audit/persistence.js";
import { disclosuresFor, holdsCallerDetails, type Reader } from "../../audit/redaction.js";

import { contractorOf, defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import {
  cursorSchema,
  decodeCursor,
  pageLimitSchema,
  pageOf,
  sinceSchema,
  untilSchema,
} from "../kernel/pagination.js";
import { verifyUrl } from "../matching/decision-records.js";

const kindFilter = z
  .enum(AUDIT_KIND_LIST as [AuditKind, ...AuditKind[]], {
    error: () => `kind must be one of: ${AUDIT_KIND_LIST.join(", ")}`,
  })
  .optional()
  .describe("Only records of this kind.");

const orderFilter = z.string().max(64).optional().describe("Only records of this order.");

const auditListInput = z.strictObject({
  order_id: orderFilter,
  kind: kindFilter,
  since: sinceSchema,
  until: untilSchema,
  cursor: cursorSchema,
  limit: pageLimitSchema,
});

const auditRecordSchema = z
  .object({
    seal: z.string(),
    kind: z.string(),
    at: z.iso.datetime(),
    order_id: z.string().nullable(),
    actor: z
      .string()
      .describe(
        "Who decided: key:<key id>, operator:<who>, system:<what>, or contractor (its id and handle are " +
          "disclosures: actor_id, actor_ref).",
      ),
    record: z
      .record(z.string(), z.unknown())
      .describe(
        "The sealed record. Its RFC 8785 canonical JSON, hashed as SHA-256(0x00 || bytes), is the leaf " +
          "that GET /api/attest/verify/{seal} proves. Version 2 records (v: 2) commit their private parts " +
          "as digests in data._sd (SD-JWT style, RFC 9901).",
      ),
    disclosures: z
      .array(z.string())
      .describe(
        "The disclosures your role may see: each the base64url of the JSON array [salt, name, value]; its " +
          "base64url SHA-256 is listed in record.data._sd.",
      ),
    disclosed: z
      .record(z.string(), z.unknown())
      .describe(
        "record.data with your disclosures applied and without _sd and _sd_alg: the record as you may read it. " +
          "When disclosure_status is failed, only the record's own members: no disclosure is applied.",
      ),
    disclosure_status: z
      .enum(["verified", "failed"])
      .describe(
        "verified: each of your disclosures is committed in the record (its digest in record.data._sd). " +
          "failed: one is not, or is malformed: the disclosures stored beside the record were altered, " +
          "disclosure_error says how, and `disclosed` holds none of them.",
      ),
    disclosure_error: z
      .string()
      .nullable()
      .describe("Why the disclosures failed (disclosure_status failed); null otherwise."),
    verify_url: z.url(),
  })
  .meta({ id: "AuditRecord" });

const auditListOutput = z
  .object({
    records: z.array(auditRecordSchema).describe("In log order: oldest first."),
    next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last page."),
  })
  .meta({ id: "AuditRecordPage" });

/** The members of sealed data as they read with no disclosure: without `_sd` and `_sd_alg`, at any depth. */
function plainMembers(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(plainMembers);
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    if (name !== "_sd" && name !== "_sd_alg") out[name] = plainMembers(member);
  }
  return out;
}

/**
 * A record as `reader` is shown it. Disclosures that do not match the record (altered where they are
 * stored) are not applied: the record is shown with disclosure_status failed, never as an error.
 */
function auditRecordView(row: AuditRecordRow, reader: Reader, baseUrl: string) {
  const record = JSON.parse(row.record) as { data: Record<string, unknown> } & Record<string, unknown>;
  const disclosures = disclosuresFor(row.disclosures, reader);
  const checked = applyDisclosures(record.data, disclosures);
  return {
    seal: row.seal,
    kind: row.kind,
    at: row.created_at,
    order_id: row.order_id,
    actor: row.actor,
    record,
    disclosures,
    disclosed: checked.ok ? checked.claims : (plainMembers(record.data) as Record<string, unknown>),
    disclosure_status: checked.ok ? ("verified" as const) : ("failed" as const),
    disclosure_error: checked.ok ? null : checked.reason,
    verify_url: verifyUrl(baseUrl, row.seal),
  };
}

// The cursor is the last record's position in log order (the same text as before this module existed).
const CURSOR_KIND = "a1";
const CURSOR = /^(\d{1,15})$/;
const afterCursor = (cursor: string | undefined) =>
  cursor === undefined ? undefined : Number(decodeCursor(cursor, CURSOR_KIND, CURSOR)[1]);
const positionOf = (last: AuditRecordRow) => String(last.seq);

/** One page of the records of `accountId` (or every account) in the key's mode, as `reader` is shown them. */
async function auditPage(
  ctx: OperationContext,
  input: z.infer<typeof auditListInput>,
  accountId: string | typeof ALL_ACCOUNTS,
  reader: Reader,
) {
  const rows = await ctx.services.store.audit.listAudit({
    accountId,
    livemode: principalOf(ctx).livemode,
    orderId: input.order_id,
    kind: input.kind,
    since: input.since,
    until: input.until,
    after: afterCursor(input.cursor),
    limit: input.limit + 1,
  });
  const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, positionOf);
  return { records: page.map((r) => auditRecordView(r, reader, ctx.baseUrl)), next_cursor };
}

export const auditListOperation = defineOperation({
  id: "auditList",
  name: "audit.list",
  summary: "List your audit records",
  description:
    "Your account's audit records (for the key's mode: test keys see sandbox records): quotes issued, orders " +
    "created and matched, keys issued and revoked. Other contractors and their prices are not shown: a " +
    "record commits to them by digest, and you get the disclosures that are yours (your handle of the " +
    "contractor chosen). Filter by order, kind and time; page with next_cursor.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/audit", input: "query" },
  input: auditListInput,
  output: auditListOutput,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", kind: "order.matched", limit: 20 },
  handler(ctx, input) {
    return auditPage(ctx, input, principalOf(ctx).accountId, { role: "caller" });
  },
});

export const dispatcherAuditListOperation = defineOperation({
  id: "dispatcherAuditList",
  name: "dispatcher.audit",
  summary: "List every account's audit records, undisclosed parts included",
  description:
    "The dispatch team's view of the audit log in the key's mode: every account's records (and the pool's), " +
    "each with all its disclosures: the ranked candidates with their prices and scores, contractor ids and " +
    "the accounts' handles of them. Filter by order, account, kind and time; page with next_cursor.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/audit", input: "query" },
  input: auditListInput.extend({
    account_id: z.string().max(64).optional().describe("Only records of this account."),
  }),
  output: auditListOutput,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", limit: 20 },
  handler(ctx, input) {
    return auditPage(ctx, input, input.account_id ?? ALL_ACCOUNTS, { role: "dispatcher" });
  },
});

/** More records than any order's life makes: the contractor's view reads an order's records at once. */
const ORDER_RECORDS_MAX = 1000;

export const contractorAuditListOperation = defineOperation({
  id: "contractorAuditList",
  name: "contractor.audit",
  summary: "List the audit records of an order you were offered",
  description:
    "A contractor's view of an order's audit records: the order's creation (the job) and every record that " +
    "names you (your offer, your answer, your progress, an assignment to or from you), each with your own " +
    "disclosures. Other contractors, the candidates and their prices, and the caller's contact details and " +
    "references (callback URL, reference, idempotency key, the site's address and name) stay undisclosed. " +
    "Empty for an order whose records do not name you.",
  access: "contractor",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/contractor/v1/audit", input: "query" },
  input: z.strictObject({
    order_id: z.string().max(64).describe("The order: one you were offered or assigned."),
  }),
  output: auditListOutput,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const reader: Reader = { role: "contractor", contractorId: contractor.contractorId };
    const rows = await ctx.services.store.audit.listAudit({
      accountId: ALL_ACCOUNTS,
      livemode: contractor.livemode,
      orderId: input.order_id,
      limit: ORDER_RECORDS_MAX,
    });
    const views = rows.map((r) => auditRecordView(r, reader, ctx.baseUrl));
    // Like any list filtered by an order, it is empty for an order that is not yours to see. The order's
    // creation is the job; one sealed before the caller's contact details became disclosures is withheld.
    const named = views.some((v) => v.disclosures.length > 0);
    const job = (v: (typeof views)[number]) =>
      v.kind === "order.created" && !holdsCallerDetails(v.record.data);
    return {
      records: named ? views.filter((v) => v.disclosures.length > 0 || job(v)) : [],
      next_cursor: null,
    };
  },
});
