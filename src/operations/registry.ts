// The one list of operations. REST routes (and later MCP tools, A2A skills and discovery documents) are
// generated from it.

import {
  attestCheckpointAtOperation,
  attestCheckpointOperation,
  attestConsistencyOperation,
  attestKeysOperation,
  attestVerifyOperation,
} from "./attest.js";
import {
  auditListOperation,
  contractorAuditListOperation,
  dispatcherAuditListOperation,
} from "./audit-list.js";
import { availabilityOperation } from "./availability.js";
import { dispatcherContractorOperation, dispatcherContractorsOperation } from "./contractor-directory.js";
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
import { evalsSeriesOperation } from "./evals-series.js";
import { eventsOperation } from "./event-stream.js";
import { type AnyOperation, servedToAgents } from "./operation.js";
import { nteDecisionOperation, orderCancelOperation } from "./order-actions.js";
import { orderListOperation } from "./order-list.js";
import { orderStatusOperation } from "./order-status.js";
import { quoteOperation } from "./quote.js";
import { probeOperation } from "./readiness-probe.js";
import { scheduleApplyOperation, scheduleOptimizeOperation } from "./schedule.js";
import {
  contractorTimeOffAddOperation,
  contractorTimeOffOperation,
  contractorTimeOffRemoveOperation,
  dispatcherTimeOffAddOperation,
  dispatcherTimeOffOperation,
  dispatcherTimeOffRemoveOperation,
} from "./time-off.js";
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
  availabilityOperation,
  orderOperation,
  orderStatusOperation,
  orderListOperation,
  eventsOperation,
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
  evalsSeriesOperation,
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
  contractorAuditListOperation,
  contractorTimeOffOperation,
  contractorTimeOffAddOperation,
  contractorTimeOffRemoveOperation,
  dispatcherOrdersOperation,
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherPoolOperation,
  dispatcherAuditListOperation,
  dispatcherContractorsOperation,
  dispatcherContractorOperation,
  scheduleOptimizeOperation,
  scheduleApplyOperation,
  dispatcherTimeOffOperation,
  dispatcherTimeOffAddOperation,
  dispatcherTimeOffRemoveOperation,
];

/** The operations agents serve (MCP tools, A2A skills): all but the streams, which REST alone can hold
 * open. */
export const AGENT_OPERATIONS: readonly AnyOperation[] = OPERATIONS.filter(servedToAgents);
