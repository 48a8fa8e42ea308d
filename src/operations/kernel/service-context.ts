// The context the service itself runs an operation in for an account, with no request behind it: the
// maintenance plans' generator creating a planned order, the sandbox's first start seeding its sites and
// plans. The operation sees the account's principal (admin role, its mode) and names `actingAs` in its
// records instead of a key.

import type { Principal } from "../../auth/api-key-service.js";
import { newId } from "../../ids.js";
import { webhookBaseUrl } from "../../webhooks/outbox.js";
import type { IdempotencyClaim, OperationContext, Services } from "./operation.js";

export function accountPrincipal(accountId: string, livemode: boolean, keyId: string): Principal {
  return {
    accountId,
    keyId,
    livemode,
    kind: "account",
    contractorId: null,
    role: "admin",
    approvalLimitCents: null,
    ratePerMinute: null,
    burst: null,
  };
}

export function serviceContext(
  services: Services,
  principal: Principal,
  actingAs: `system:${string}`,
  input: unknown,
  idempotency?: IdempotencyClaim,
): OperationContext {
  return {
    services,
    requestId: newId("req"),
    principal,
    baseUrl: webhookBaseUrl(services.config),
    receivedAt: services.now(),
    receivedHr: process.hrtime.bigint(),
    idempotencyKey: undefined,
    ...(idempotency ? { idempotency } : {}),
    rawInput: input,
    actingAs,
    setHeader: () => {},
  };
}
