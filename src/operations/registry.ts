// The one list of operations, gathered from their subject folders. REST routes, MCP tools, A2A skills, the
// OpenAPI document and the agent card are all generated from it.

import {
  attestCheckpointAtOperation,
  attestCheckpointOperation,
  attestConsistencyOperation,
  attestKeysOperation,
  attestVerifyOperation,
} from "./audit/attest.js";
import {
  auditListOperation,
  contractorAuditListOperation,
  dispatcherAuditListOperation,
} from "./audit/audit-list.js";
import { evalsOperation } from "./evals/evals.js";
import { evalsSeriesOperation } from "./evals/evals-series.js";
import { type AnyOperation, servedToAgents } from "./kernel/operation.js";
import { accountKeysOperation, keyRoleSetOperation } from "./keys/key-roles.js";
import { maintenanceComplianceOperation } from "./maintenance/compliance.js";
import {
  occurrenceMoveOperation,
  occurrenceSkipOperation,
  occurrencesOperation,
} from "./maintenance/occurrences.js";
import {
  planArchiveOperation,
  planCreateOperation,
  planOperation,
  plansOperation,
  planUpdateOperation,
} from "./maintenance/plans.js";
import { availabilityOperation } from "./matching/availability.js";
import { estimateOperation } from "./matching/estimate.js";
import { quoteOperation } from "./matching/quote.js";
import { tradeIndexOperation } from "./matching/trade-index.js";
import {
  notificationOperation,
  notificationResendOperation,
  notificationsOperation,
} from "./notifications/notification-log.js";
import {
  notificationOptOutOperation,
  notificationSubscribersOperation,
  notificationSubscribersSetOperation,
} from "./notifications/notification-people.js";
import {
  attachmentContentOperation,
  attachmentListOperation,
  attachmentThumbnailOperation,
  attachmentUploadOperation,
} from "./orders/attachments.js";
import { nteDecisionOperation, orderCancelOperation } from "./orders/caller-actions.js";
import {
  checklistTemplateCreateOperation,
  checklistTemplateRetireOperation,
  checklistTemplatesOperation,
} from "./orders/checklist-templates.js";
import { contractorChecklistAnswerOperation, orderChecklistOperation } from "./orders/checklists.js";
import {
  contractorAcceptOperation,
  contractorDeclineOperation,
  contractorInvoiceOperation,
  contractorJobsOperation,
  contractorNteRequestOperation,
  contractorOffersOperation,
  contractorReportOperation,
} from "./orders/contractor-actions.js";
import {
  contractorCounterOperation,
  counterAcceptOperation,
  counterDeclineOperation,
  counterPolicyOperation,
  counterPolicySetOperation,
} from "./orders/counter-offers.js";
import { orderOperation } from "./orders/create-order.js";
import {
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherOrderOperation,
  dispatcherOrdersOperation,
  dispatcherPoolOperation,
  dispatcherRescheduleOperation,
} from "./orders/dispatcher-actions.js";
import {
  dispatcherDoNotDispatchOperation,
  doNotDispatchAddOperation,
  doNotDispatchOperation,
  doNotDispatchRemoveOperation,
} from "./orders/do-not-dispatch.js";
import { eventsOperation } from "./orders/event-stream.js";
import {
  dispatcherExportInvoicesOperation,
  dispatcherExportOrdersOperation,
  exportInvoicesOperation,
  exportOrdersOperation,
} from "./orders/exports.js";
import {
  invoiceDecisionOperation,
  invoicePaidOperation,
  invoicePolicyOperation,
  invoicePolicySetOperation,
} from "./orders/invoice-decisions.js";
import { contractorInvoiceReviseOperation, orderInvoiceOperation } from "./orders/invoices.js";
import { orderListOperation } from "./orders/order-list.js";
import { orderStatusOperation } from "./orders/order-status.js";
import { proofRequirementsOperation, proofRequirementsSetOperation } from "./orders/proof-requirements.js";
import { contractorRatingsOperation, orderRateOperation, orderRatingOperation } from "./orders/ratings.js";
import { serviceReportOperation } from "./orders/service-report.js";
import {
  dispatcherContractorOperation,
  dispatcherContractorsOperation,
} from "./pool/contractor-directory.js";
import { scheduleApplyOperation, scheduleOptimizeOperation } from "./pool/schedule.js";
import { scheduleLanesOperation } from "./pool/schedule-lanes.js";
import {
  contractorTimeOffAddOperation,
  contractorTimeOffOperation,
  contractorTimeOffRemoveOperation,
  dispatcherTimeOffAddOperation,
  dispatcherTimeOffOperation,
  dispatcherTimeOffRemoveOperation,
} from "./pool/time-off.js";
import { probeOperation } from "./probe/storefront-probe.js";
import {
  requestLinkOperation,
  requestLinkQrOperation,
  requestLinkRotateOperation,
} from "./requests/request-links.js";
import { requestPolicyOperation, requestPolicySetOperation } from "./requests/request-policy.js";
import {
  requestApproveOperation,
  requestCreateOperation,
  requestOperation,
  requestRejectOperation,
  requestsOperation,
} from "./requests/requests.js";
import { assetHistoryOperation } from "./sites/asset-history.js";
import {
  assetArchiveOperation,
  assetCreateOperation,
  assetsOperation,
  assetUpdateOperation,
} from "./sites/assets.js";
import { dispatcherSiteOperation, dispatcherSitesOperation } from "./sites/dispatcher-sites.js";
import { siteImportOperation } from "./sites/site-import.js";
import { siteOperation, sitesOperation } from "./sites/site-reads.js";
import { siteArchiveOperation, siteCreateOperation, siteUpdateOperation } from "./sites/sites.js";
import {
  trackingLinkOperation,
  trackingLinkRevokeOperation,
  trackingLinksOperation,
} from "./tracking/tracking-links.js";
import {
  webhooksConfigOperation,
  webhooksDeliveriesOperation,
  webhooksEnableEndpointOperation,
  webhooksRedeliverOperation,
  webhooksRotateSecretOperation,
  webhooksSetEndpointOperation,
} from "./webhooks/webhook-settings.js";

export const OPERATIONS: readonly AnyOperation[] = [
  quoteOperation,
  availabilityOperation,
  orderOperation,
  orderStatusOperation,
  orderListOperation,
  exportOrdersOperation,
  exportInvoicesOperation,
  eventsOperation,
  orderCancelOperation,
  nteDecisionOperation,
  counterAcceptOperation,
  counterDeclineOperation,
  attachmentUploadOperation,
  attachmentListOperation,
  attachmentContentOperation,
  attachmentThumbnailOperation,
  proofRequirementsOperation,
  proofRequirementsSetOperation,
  counterPolicyOperation,
  counterPolicySetOperation,
  doNotDispatchOperation,
  doNotDispatchAddOperation,
  doNotDispatchRemoveOperation,
  serviceReportOperation,
  orderInvoiceOperation,
  invoiceDecisionOperation,
  invoicePaidOperation,
  invoicePolicyOperation,
  invoicePolicySetOperation,
  accountKeysOperation,
  keyRoleSetOperation,
  orderRateOperation,
  orderRatingOperation,
  orderChecklistOperation,
  checklistTemplateCreateOperation,
  checklistTemplatesOperation,
  checklistTemplateRetireOperation,
  siteCreateOperation,
  siteUpdateOperation,
  siteArchiveOperation,
  siteImportOperation,
  sitesOperation,
  siteOperation,
  assetCreateOperation,
  assetUpdateOperation,
  assetArchiveOperation,
  assetsOperation,
  assetHistoryOperation,
  planCreateOperation,
  planUpdateOperation,
  planArchiveOperation,
  plansOperation,
  planOperation,
  occurrencesOperation,
  occurrenceSkipOperation,
  occurrenceMoveOperation,
  maintenanceComplianceOperation,
  trackingLinkOperation,
  trackingLinksOperation,
  trackingLinkRevokeOperation,
  requestLinkOperation,
  requestLinkRotateOperation,
  requestLinkQrOperation,
  requestsOperation,
  requestOperation,
  requestCreateOperation,
  requestApproveOperation,
  requestRejectOperation,
  requestPolicyOperation,
  requestPolicySetOperation,
  notificationsOperation,
  notificationOperation,
  notificationResendOperation,
  notificationSubscribersOperation,
  notificationSubscribersSetOperation,
  notificationOptOutOperation,
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
  contractorCounterOperation,
  contractorJobsOperation,
  contractorReportOperation,
  contractorNteRequestOperation,
  contractorInvoiceOperation,
  contractorInvoiceReviseOperation,
  contractorChecklistAnswerOperation,
  contractorAuditListOperation,
  contractorRatingsOperation,
  contractorTimeOffOperation,
  contractorTimeOffAddOperation,
  contractorTimeOffRemoveOperation,
  dispatcherOrdersOperation,
  dispatcherOrderOperation,
  dispatcherExportOrdersOperation,
  dispatcherExportInvoicesOperation,
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherRescheduleOperation,
  dispatcherPoolOperation,
  dispatcherAuditListOperation,
  dispatcherContractorsOperation,
  dispatcherContractorOperation,
  dispatcherDoNotDispatchOperation,
  dispatcherSitesOperation,
  dispatcherSiteOperation,
  scheduleOptimizeOperation,
  scheduleApplyOperation,
  scheduleLanesOperation,
  dispatcherTimeOffOperation,
  dispatcherTimeOffAddOperation,
  dispatcherTimeOffRemoveOperation,
];

/** The operations agents serve (MCP tools, A2A skills): all but the streams, which REST alone can hold
 * open. */
export const AGENT_OPERATIONS: readonly AnyOperation[] = OPERATIONS.filter(servedToAgents);
