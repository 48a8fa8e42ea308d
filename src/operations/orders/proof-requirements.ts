// What an account requires before its jobs are completed (issue 32): the site contact's signature, a
// photo of the work. Set per account and mode by the account's own key, sealed in the audit log, and
// enforced by the contractor's "completed" (domain/orders/completion-gate.ts), which is refused naming what
// is missing.

import { z } from "zod";
import { NO_REQUIREMENTS, type ProofRequirements } from "../../domain/orders/completion-gate.js";
import type { ProofRequirementsRow } from "../../storage/store.js";
import { setAccountSetting } from "../kernel/account-settings.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";

const requirementsSchema = z
  .object({
    signature_required: z
      .boolean()
      .describe("The site contact signs on the contractor's phone before the job can be completed."),
    photo_required: z
      .boolean()
      .describe("The contractor adds at least one photo of the work before the job can be completed."),
    updated_at: z.iso.datetime().nullable().describe("When they were last set; null: never (none required)."),
    record: sealRefSchema
      .nullable()
      .describe("The audit record that set them (account.proof_requirements_set); null: never set."),
  })
  .meta({ id: "ProofRequirements" });

function view(row: ProofRequirementsRow | undefined, ctx: OperationContext) {
  const r: ProofRequirements = row ?? NO_REQUIREMENTS;
  return {
    signature_required: r.signature_required,
    photo_required: r.photo_required,
    updated_at: row?.updated_at ?? null,
    record: row ? sealRef(ctx.baseUrl, row.seal, "account.proof_requirements_set", row.updated_at) : null,
  };
}

export const proofRequirementsOperation = defineOperation({
  id: "proofRequirements",
  name: "dispatch.proof_requirements",
  summary: "What your jobs need before completion",
  description:
    "The proof your account requires of every job of this key's mode before the contractor may complete " +
    "it: the site contact's signature, a photo of the work. None until you set them.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/proof-requirements", input: "query" },
  input: z.strictObject({}),
  output: requirementsSchema,
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    return view(await ctx.services.store.proofRequirements.get(principal.accountId, principal.livemode), ctx);
  },
});

export const proofRequirementsSetOperation = defineOperation({
  id: "proofRequirementsSet",
  name: "dispatch.set_proof_requirements",
  summary: "Require a signature or a photo before completion",
  description:
    "Sets what every job of this key's mode needs before its contractor may complete it; a field left out " +
    "keeps its value. The contractor's completed is then refused (409 completion_requirements_unmet, " +
    "naming each missing item) until the job has them. Applies to jobs completed from now on, including " +
    "jobs under way. Sealed in the audit log (account.proof_requirements_set).",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/proof-requirements", input: "body" },
  input: z.strictObject({
    signature_required: z.boolean().optional(),
    photo_required: z.boolean().optional(),
  }),
  output: requirementsSchema,
  example: { signature_required: true },
  async handler(ctx, input) {
    const { store } = ctx.services;
    const row = await setAccountSetting<ProofRequirements>(ctx, {
      kind: "account.proof_requirements_set",
      read: (account, livemode, tx) => store.proofRequirements.get(account, livemode, tx),
      values: (before) => ({
        signature_required: input.signature_required ?? before?.signature_required ?? false,
        photo_required: input.photo_required ?? before?.photo_required ?? false,
      }),
      write: (next, tx) => store.proofRequirements.set(next, tx),
    });
    return view(row, ctx);
  },
});
