// An account's keys and their roles (issue 33; domain/key-roles.ts): an admin key lists the account's keys
// of its mode and sets their roles and approval limits. The CLI does the same for an operator
// (`npm run cli -- keys role`).

import { z } from "zod";
import { DEFAULT_KEY_ROLE, KEY_ROLES } from "../../domain/key-roles.js";
import { INVOICE_LIMITS } from "../../domain/orders/invoice.js";
import { ApiError, validationError } from "../../errors.js";
import type { ApiKeysTable } from "../../storage/schema.js";
import { defineOperation, principalOf } from "../kernel/operation.js";

const keySchema = z
  .object({
    id: z.string(),
    hint: z.string().describe("The key's mode and last four characters; never the key."),
    label: z.string().nullable(),
    role: z.enum(KEY_ROLES),
    approval_limit_cents: z
      .number()
      .int()
      .nullable()
      .describe("An approver's approval limit; null: no limit (and for the other roles)."),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "AccountKey" });

function keyView(row: ApiKeysTable) {
  return {
    id: row.id,
    hint: row.key_hint,
    label: row.label,
    role: row.role ?? DEFAULT_KEY_ROLE,
    approval_limit_cents: row.approval_limit_cents === null ? null : Number(row.approval_limit_cents),
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}

export const accountKeysOperation = defineOperation({
  id: "dispatchKeys",
  name: "dispatch.keys",
  summary: "Your account's keys and their roles",
  description:
    "The account keys of your account in this key's mode (revoked ones too), each with its role: " +
    "requester (orders and their reading), approver (also decides invoices and NTE increases up to its " +
    "approval limit, and records payments), admin (everything, and the account's settings). A key " +
    "without a role set is an admin. Takes an admin's key.",
  access: "key",
  role: "admin",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/keys", input: "query" },
  input: z.strictObject({}),
  output: z.object({ keys: z.array(keySchema) }),
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    const rows = await ctx.services.store.keys.ofAccount(
      principal.accountId,
      principal.livemode ? "live" : "test",
    );
    return { keys: rows.map(keyView) };
  },
});

export const keyRoleSetOperation = defineOperation({
  id: "dispatchKeyRoleSet",
  name: "dispatch.key_role_set",
  summary: "Set a key's role and approval limit",
  description:
    "Sets the role of one of your account's keys of this mode: requester, approver (with " +
    "approval_limit_cents, or none for no limit) or admin. The account keeps at least one admin key in " +
    "force: demoting the last one is refused (422, field role). Takes an admin's key; sealed " +
    "(key.role_set). Other server processes apply it within API_KEY_CACHE_TTL_MS.",
  access: "key",
  role: "admin",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/keys/role", input: "body" },
  problems: [404],
  input: z.strictObject({
    key_id: z.string().min(1).max(64),
    role: z.enum(KEY_ROLES),
    approval_limit_cents: z
      .number()
      .int()
      .min(0)
      .max(INVOICE_LIMITS.totalCents)
      .nullable()
      .optional()
      .describe("An approver's limit in cents; leave out (or null) for no limit. Only with role approver."),
  }),
  output: keySchema,
  example: { key_id: "key_0VberZOdAb12Cd34Ef56", role: "approver", approval_limit_cents: 100_000 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const limit = input.approval_limit_cents ?? null;
    if (limit !== null && input.role !== "approver") {
      throw validationError([{ field: "approval_limit_cents", message: "goes only with role approver" }]);
    }
    const mode = principal.livemode ? "live" : "test";
    const keys = await ctx.services.store.keys.ofAccount(principal.accountId, mode);
    const target = keys.find((k) => k.id === input.key_id);
    if (!target) throw new ApiError("not_found", `No key ${input.key_id} of this account in ${mode} mode.`);
    const admins = keys.filter((k) => k.revoked_at === null && (k.role ?? DEFAULT_KEY_ROLE) === "admin");
    if (input.role !== "admin" && admins.length === 1 && admins[0]?.id === target.id) {
      throw validationError([
        {
          field: "role",
          message: "this is the account's last admin key in this mode: make another key admin first",
        },
      ]);
    }
    const row = await ctx.services.keys.setRole(
      target.id,
      principal.accountId,
      input.role,
      limit,
      `key:${principal.keyId}`,
    );
    if (row === "not_found") throw new ApiError("not_found", `No key ${input.key_id} of this account.`);
    return keyView(row);
  },
});
