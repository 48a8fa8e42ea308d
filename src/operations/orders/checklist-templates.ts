// Checklist templates (issue 32): the service's per trade, managed by the dispatch team (dispatcher keys),
// and an account's own per trade (its key): every order of that trade gets the templates in force when
// its checklist is fixed (the service's and the account's; only the account's when one of its templates
// replaces the service's). A template is never edited: a new one is created and the old one retired, so
// a job's checklist, fixed from them, never changes under its contractor.

import { z } from "zod";
import type { Principal } from "../../auth/api-key-service.js";
import {
  CHECKLIST_LIMITS,
  type ChecklistItem,
  type ChecklistTemplate,
} from "../../domain/orders/checklist.js";
import { ApiError, validationError } from "../../errors.js";
import { newId, newSortableId } from "../../ids.js";
import type { Store, WriteTx } from "../../storage/store.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { tradeSchema } from "../kernel/schemas.js";
import { itemShape } from "./checklists.js";

const L = CHECKLIST_LIMITS;
const label = z
  .string()
  .trim()
  .min(1, "label must not be empty")
  .max(L.labelLength, `label must be at most ${L.labelLength} characters`)
  .describe(`What the contractor is asked, up to ${L.labelLength} characters.`);
const required = z
  .boolean()
  .default(false)
  .describe("Completion is refused while this item is unanswered (default false).");
const bound = z.number().refine(Number.isFinite, "must be a finite number").nullable().optional();

const itemInput = z
  .discriminatedUnion(
    "kind",
    [
      z.strictObject({ kind: z.literal("yes_no"), label, required }),
      z
        .strictObject({
          kind: z.literal("number"),
          label,
          required,
          unit: z
            .string()
            .trim()
            .max(L.unitLength, `unit must be at most ${L.unitLength} characters`)
            .nullable()
            .optional()
            .describe("The unit the value is given in (psi, °F, gal), shown to the contractor."),
          min: bound.describe("The least value accepted (inclusive)."),
          max: bound.describe("The most value accepted (inclusive)."),
        })
        .refine((i) => i.min == null || i.max == null || i.min <= i.max, {
          message: "min must not exceed max",
          path: ["max"],
        }),
      z.strictObject({
        kind: z.literal("text"),
        label,
        required,
        max_length: z
          .number()
          .int()
          .min(1)
          .max(L.textMaxLength)
          .default(L.textDefaultMaxLength)
          .describe(`The most characters an answer may hold (default ${L.textDefaultMaxLength}).`),
      }),
      z.strictObject({
        kind: z.literal("photo"),
        label,
        required,
      }),
    ],
    { error: "kind must be one of: yes_no, number, text, photo" },
  )
  .describe(
    "An item: yes_no, number (unit, min, max), text (max_length) or photo (answered by an attachment).",
  );

const templateSchema = z
  .object({
    template_id: z.string(),
    scope: z
      .enum(["service", "account"])
      .describe("service: the dispatch team's; account: the account's own."),
    account_id: z.string().nullable(),
    trade: z.string(),
    name: z.string(),
    replaces_service: z.boolean(),
    items: z.array(z.object(itemShape)),
    created_at: z.iso.datetime(),
    retired_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "ChecklistTemplate" });

function templateView(t: ChecklistTemplate): z.input<typeof templateSchema> {
  return {
    template_id: t.id,
    scope: t.accountId === null ? "service" : "account",
    account_id: t.accountId,
    trade: t.trade,
    name: t.name,
    replaces_service: t.replacesService,
    items: t.items,
    created_at: t.createdAt,
    retired_at: t.retiredAt,
  };
}

/** The scope a key manages templates in: the dispatch team the service's, an account its own. */
function managerOf(ctx: OperationContext): { principal: Principal; accountId: string | null; actor: string } {
  const principal = principalOf(ctx);
  if (principal.kind === "contractor") {
    throw new ApiError(
      "key_kind_not_allowed",
      "Checklist templates are managed by the account (its own) and the dispatch team (the service's); this is a contractor key.",
    );
  }
  return principal.kind === "dispatcher"
    ? { principal, accountId: null, actor: `operator:${principal.keyId}` }
    : { principal, accountId: principal.accountId, actor: `key:${principal.keyId}` };
}

function itemOf(input: z.output<typeof itemInput>): ChecklistItem {
  const base = { item_id: newId("cli"), label: input.label, kind: input.kind, required: input.required };
  if (input.kind === "number")
    return { ...base, unit: input.unit ?? null, min: input.min ?? null, max: input.max ?? null };
  if (input.kind === "text") return { ...base, max_length: input.max_length };
  return base;
}

/** What creating a template takes: the operation's input, and the starter checklists bootstrap seeds. */
export const templateInput = z.strictObject({
  trade: tradeSchema,
  name: z
    .string()
    .trim()
    .min(1, "name must not be empty")
    .max(L.nameLength, `name must be at most ${L.nameLength} characters`),
  replaces_service: z
    .boolean()
    .default(false)
    .describe("An account's template only: its orders of the trade get none of the service's templates."),
  items: z
    .array(itemInput)
    .min(1, "a template has at least one item")
    .max(L.itemsPerTemplate, `a template has at most ${L.itemsPerTemplate} items`),
});

/** Who a template is created for and by: its mode, its account (null: the service's) and its author. */
export interface TemplateOwner {
  livemode: boolean;
  accountId: string | null;
  actor: string;
}

/**
 * Creates a template inside `tx`, as the create operation does for the dispatch team or an account and
 * bootstrap for the sandbox's starter checklists: the template, or the refusal when its trade has the
 * most templates in force for its scope already (nothing written).
 */
export async function createTemplate(
  store: Store,
  tx: WriteTx,
  owner: TemplateOwner,
  input: z.output<typeof templateInput>,
  at: string,
): Promise<ChecklistTemplate | ApiError> {
  if (owner.accountId === null && input.replaces_service) {
    return validationError([
      { field: "replaces_service", message: "only an account's template replaces the service's" },
    ]);
  }
  const scope = { livemode: owner.livemode, accountId: owner.accountId, trade: input.trade };
  const active = await store.checklists.templates(scope, tx);
  if (active.length >= L.activeTemplatesPerTrade) {
    return validationError([
      {
        field: "trade",
        message: `at most ${L.activeTemplatesPerTrade} templates are in force for ${input.trade} at once: retire one first`,
      },
    ]);
  }
  const template: ChecklistTemplate = {
    id: newSortableId("clt"),
    livemode: owner.livemode,
    accountId: owner.accountId,
    trade: input.trade,
    name: input.name,
    replacesService: input.replaces_service,
    items: input.items.map(itemOf),
    createdAt: at,
    createdBy: owner.actor,
    retiredAt: null,
  };
  await store.checklists.insertTemplate(template, tx);
  return template;
}

export const checklistTemplateCreateOperation = defineOperation({
  id: "checklistTemplateCreate",
  name: "checklist.template_create",
  summary: "Create a checklist template for a trade",
  description:
    "An account's key creates the account's own template: its orders of that trade get it (beside the " +
    "service's, or instead of them with replaces_service). A dispatcher key creates the service's template " +
    `of the trade, which every order of the trade gets. Up to ${L.itemsPerTemplate} items, each yes_no, ` +
    "number (unit, min, max), text (max_length) or photo, required or not. A template is never edited: " +
    `create a new one and retire the old. At most ${L.activeTemplatesPerTrade} templates in force per trade ` +
    "and scope. A job's checklist is fixed from the templates in force when it is first needed.",
  access: "any_key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/checklist-templates", input: "body" },
  input: templateInput,
  output: templateSchema,
  example: {
    trade: "plumbing",
    name: "Leak repair",
    items: [
      { kind: "yes_no", label: "Water shut off before work", required: true },
      { kind: "number", label: "Line pressure after repair", unit: "psi", min: 0, max: 200, required: true },
      { kind: "photo", label: "Repaired joint", required: false },
    ],
  },
  async handler(ctx, input) {
    const { accountId, principal, actor } = managerOf(ctx);
    const { store } = ctx.services;
    const owner = { livemode: principal.livemode, accountId, actor };
    const at = ctx.services.now().toISOString();
    const created = await store.write((tx) => createTemplate(store, tx, owner, input, at));
    if (created instanceof ApiError) throw created;
    return templateView(created);
  },
});

export const checklistTemplatesOperation = defineOperation({
  id: "checklistTemplates",
  name: "checklist.templates",
  summary: "List checklist templates",
  description:
    "An account's key lists its own templates (scope=service: the service's, which its orders get too); a " +
    "dispatcher key lists every template of its mode (scope narrows it). Templates in force by default; " +
    "status=retired or all for the others. Oldest first.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/checklist-templates", input: "query" },
  input: z.strictObject({
    trade: tradeSchema.optional(),
    scope: z.enum(["account", "service"], { error: "scope must be account or service" }).optional(),
    status: z
      .enum(["active", "retired", "all"], { error: "status must be active, retired or all" })
      .default("active"),
  }),
  output: z.object({ templates: z.array(templateSchema) }).meta({ id: "ChecklistTemplateList" }),
  example: { trade: "plumbing" },
  async handler(ctx, input) {
    const { principal, accountId } = managerOf(ctx);
    const owner =
      input.scope === "service"
        ? null
        : accountId !== null
          ? accountId
          : input.scope === "account"
            ? "accounts"
            : undefined;
    const found = await ctx.services.store.checklists.templates({
      livemode: principal.livemode,
      ...(owner !== "accounts" ? { accountId: owner } : {}),
      ...(input.trade ? { trade: input.trade } : {}),
      includeRetired: input.status !== "active",
    });
    const templates = found.filter(
      (t) =>
        (owner !== "accounts" || t.accountId !== null) &&
        (input.status !== "retired" || t.retiredAt !== null),
    );
    return { templates: templates.map(templateView) };
  },
});

export const checklistTemplateRetireOperation = defineOperation({
  id: "checklistTemplateRetire",
  name: "checklist.template_retire",
  summary: "Retire a checklist template",
  description:
    "From now on no order's checklist is fixed with it; the jobs whose checklist holds its items keep " +
    "them. An account retires its own templates, the dispatch team any of its mode. Retiring a retired " +
    "template answers it as it is.",
  access: "any_key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/checklist-templates/:template_id/retire", input: "params" },
  problems: [404],
  input: z.strictObject({
    template_id: z.string().min(1).max(64).describe("The template's id (clt_...)."),
  }),
  output: templateSchema,
  example: { template_id: "clt_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const { principal, accountId, actor } = managerOf(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const retired = await store.write(async (tx) => {
      const t = await store.checklists.templateById(input.template_id, tx);
      const mine =
        t !== undefined &&
        t.livemode === principal.livemode &&
        (accountId === null || t.accountId === accountId);
      if (!t || !mine) return null;
      if (t.retiredAt === null) await store.checklists.retireTemplate(t.id, at, actor, tx);
      return { ...t, retiredAt: t.retiredAt ?? at };
    });
    if (!retired)
      throw new ApiError("not_found", `No checklist template ${input.template_id} for this API key.`);
    return templateView(retired);
  },
});
