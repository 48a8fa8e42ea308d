// The account's request policy (per mode): whether a request whose trade the keyword model guesses
// confidently becomes an order at once, or every request waits for approval (the default).

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { REQUEST_POLICY_MODES } from "../../domain/requests/request.js";
import { defineOperation } from "../kernel/operation.js";
import { ownerOf } from "../sites/site-views.js";
import { policyOf, requestPolicySchema } from "./request-views.js";

export const requestPolicyOperation = defineOperation({
  id: "dispatchRequestPolicy",
  name: "dispatch.request_policy",
  summary: "Read your request policy",
  description:
    "Whether your sites' requests become orders at once (create) or wait for your approval (hold, the " +
    "default until you set one).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/request-policy", input: "query" },
  input: z.strictObject({}),
  output: requestPolicySchema,
  example: {},
  async handler(ctx) {
    const owner = ownerOf(ctx);
    return policyOf(ctx.services, owner.accountId, owner.livemode);
  },
});

export const requestPolicySetOperation = defineOperation({
  id: "dispatchRequestPolicySet",
  name: "dispatch.request_policy_set",
  summary: "Set your request policy",
  description:
    "create: a request whose trade the published keyword model guesses with confidence at or above its " +
    "threshold becomes an order at once (or is linked to an open order of the same site and trade); one " +
    "it cannot guess waits. hold: every request waits for dispatch.request_approve. Sealed " +
    "(request.policy_set). Applies to requests received from then on.",
  access: "key",
  role: "admin",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/request-policy", input: "body" },
  input: z.strictObject({
    mode: z.enum(REQUEST_POLICY_MODES, { error: `mode must be one of: ${REQUEST_POLICY_MODES.join(", ")}` }),
  }),
  output: requestPolicySchema,
  example: { mode: "create" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const at = ctx.services.now().toISOString();
    const record = sealRecord({
      kind: "request.policy_set",
      at,
      accountId: owner.accountId,
      livemode: owner.livemode,
      orderId: null,
      actor: owner.actor,
      data: { mode: input.mode },
    });
    await ctx.services.store.write(async (tx) => {
      await ctx.services.store.requests.setPolicy(
        {
          account_id: owner.accountId,
          livemode: owner.livemode ? 1 : 0,
          mode: input.mode,
          updated_at: at,
          updated_by: owner.actor,
          seal: record.seal,
        },
        tx,
      );
      tx.appendAudit(record);
    });
    return { mode: input.mode, updated_at: at, seal: record.seal };
  },
});
