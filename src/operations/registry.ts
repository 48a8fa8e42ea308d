// The one list of operations. REST routes (and later MCP tools, A2A skills and discovery documents) are
// generated from it.

import {
  attestCheckpointAtOperation,
  attestCheckpointOperation,
  attestConsistencyOperation,
  attestKeysOperation,
  attestVerifyOperation,
} from "./attest.js";
import { auditListOperation } from "./audit-list.js";
import {
  contractorAcceptOperation,
  contractorDeclineOperation,
  contractorInvoiceOperation,
  contractorJobsOperation,
  contractorNteRequestOperation,
  contractorOffersOperation,
  contractorReportOperation,
} from "./contractor-work.js";
import { orderOperation } from "./create-order.js";
import {
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherOrdersOperation,
  dispatcherPoolOperation,
} from "./dispatcher.js";
import { estimateOperation } from "./estimate.js";
import { evalsOperation } from "./evals.js";
import type { AnyOperation } from "./operation.js";
import { nteDecisionOperation, orderCancelOperation } from "./order-actions.js";
import { orderListOperation } from "./order-list.js";
import { orderStatusOperation } from "./order-status.js";
import { quoteOperation } from "./quote.js";
import { probeOperation } from "./readiness-probe.js";
import { tradeIndexOperation } from "./trade-index.js";
import {
  webhooksConfigOperation,
  webhooksDeliveriesOperation,
  webhooksEnableEndpointOperation,
  webhooksRedeliverOperation,
  webhooksRotateSecretOperation,
  webhooksSetEndpointOperation,
} from "./webhook-settings.js";

export const OPERATIONS: readonly AnyOperation[] = [
  quoteOperation,
  orderOperation,
  orderStatusOperation,
  orderListOperation,
  orderCancelOperation,
  nteDecisionOperation,
  webhooksConfigOperation,
  webhooksSetEndpointOperation,
  webhooksRotateSecretOperation,
  webhooksDeliveriesOperation,
  webhooksRedeliverOperation,
  webhooksEnableEndpointOperation,
  estimateOperation,
  tradeIndexOperation,
  evalsOperation,
  probeOperation,
  attestVerifyOperation,
  attestCheckpointOperation,
  attestCheckpointAtOperation,
  attestConsistencyOperation,
  attestKeysOperation,
  auditListOperation,
  contractorOffersOperation,
  contractorAcceptOperation,
  contractorDeclineOperation,
  contractorJobsOperation,
  contractorReportOperation,
  contractorNteRequestOperation,
  contractorInvoiceOperation,
  dispatcherOrdersOperation,
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherPoolOperation,
];
