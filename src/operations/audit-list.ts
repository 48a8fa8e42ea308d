// auditList: the caller's own audit records with their contents, filtered and paginated. Records are
// scoped to the key's account and mode: no account ever sees another's.

import { z } from "zod";
import { AUDIT_KIND_LIST, type AuditKind } from "../audit/kinds.js";
import { verifyUrl } from "./audit-decisions.js";
import { defineOperation, principalOf } from "./operation.js";
import {
  cursorSchema,
  decodeCursor,
  pageLimitSchema,
  pageOf,
  sinceSchema,
  untilSchema,
} from "./pagination.js";

const auditListInput = z.strictObject({
  order_id: z.string().max(64).optional().describe("Only records of this order."),
  kind: z
    .enum(AUDIT_KIND_LIST as [AuditKind, ...AuditKind[]], {
      error: () => `kind must be one of: ${AUDIT_KIND_LIST.join(", ")}`,
    })
    .optional()
    .describe("Only records of this kind."),
  since: sinceSchema,
  until: untilSchema,
  cursor: cursorSchema,
  limit: pageLimitSchema,
});

export const auditRecordSchema = z
  .object({
    seal: z.string(),
    kind: z.string(),
    at: z.iso.datetime(),
    order_id: z.string().nullable(),
    actor: z.string().describe("Who decided: key:<key id>, operator:<who>, system:<what>."),
    record: z
      .record(z.string(), z.unknown())
      .describe(
        "The sealed record. Its RFC 8785 canonical JSON, hashed as SHA-256(0x00 || bytes), is the leaf " +
          "that GET /api/attest/verify/{seal} proves.",
      ),
    verify_url: z.url(),
  })
  .meta({ id: "AuditRecord" });

export const auditListOutput = z
  .object({
    records: z.array(auditRecordSchema).describe("In log order: oldest first."),
    next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last page."),
  })
  .meta({ id: "AuditRecordPage" });

// The cursor is the last record's position in log order (the same text as before this module existed).
const CURSOR_KIND = "a1";
const CURSOR = /^(\d{1,15})$/;

export const auditListOperation = defineOperation({
  id: "auditList",
  name: "audit.list",
  summary: "List your audit records",
  description:
    "Your account's audit records (for the key's mode: test keys see sandbox records) with their full " +
    "contents: quotes issued, orders created and matched, keys issued and revoked. Filter by order, kind " +
    "and time; page with next_cursor.",
  access: "key",
  limit: "key",
  http: { method: "GET", path: "/api/audit", input: "query" },
  input: auditListInput,
  output: auditListOutput,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", kind: "order.matched", limit: 20 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const after =
      input.cursor === undefined ? undefined : Number(decodeCursor(input.cursor, CURSOR_KIND, CURSOR)[1]);
    const rows = await ctx.services.store.audit.listAudit({
      accountId: principal.accountId,
      livemode: principal.livemode,
      orderId: input.order_id,
      kind: input.kind,
      since: input.since,
      until: input.until,
      after,
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (last) => String(last.seq));
    return {
      records: page.map((r) => ({
        seal: r.seal,
        kind: r.kind,
        at: r.created_at,
        order_id: r.order_id,
        actor: r.actor,
        record: JSON.parse(r.record) as Record<string, unknown>,
        verify_url: verifyUrl(ctx.baseUrl, r.seal),
      })),
      next_cursor,
    };
  },
});
