// Exports for accounts payable (issue 33): an account's invoices (one CSV row per invoice line, or one JSON
// line per invoice with its lines and decisions) and orders (one row each), in a date range and some
// statuses, in CSV or JSON Lines; the dispatch team's of every account. Written as they are read, a page
// of rows at a time (export-format.ts pagedText), so an export of any length holds one page in memory.
// REST only: agents cannot hold a stream (kernel/text-stream.ts).

import { z } from "zod";
import type { InvoiceDecision, InvoiceVersion } from "../../domain/orders/invoice.js";
import { isUnitemised, unitemised } from "../../domain/orders/invoice.js";
import type { Order } from "../../domain/orders/order.js";
import { CURRENCY } from "../../domain/pricing.js";
import type { ExportQuery } from "../../storage/store.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { TextStream } from "../kernel/text-stream.js";
import {
  csvLine,
  EXPORT_MEDIA_TYPES,
  EXPORT_PAGE_ROWS,
  type ExportRange,
  exportFilename,
  exportRange,
  exportRangeShape,
  jsonLine,
  pagedText,
  statusList,
  statusQuery,
} from "./export-format.js";
import { INVOICE_STATUS, INVOICE_STATUSES, POLICY_ACTOR } from "./invoices.js";
import { ORDER_STATUSES } from "./order-view.js";

type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
type Cell = string | number | boolean | null;

/** Whose orders an export reads, and how it names contractors: an account sees its own handle of each
 * (contractor_ref), the dispatch team the account and the contractor's id, as their order views do. */
interface Scope {
  livemode: boolean;
  accountId?: string;
  team: boolean;
}

function accountScope(ctx: OperationContext): Scope {
  const principal = principalOf(ctx);
  return { livemode: principal.livemode, accountId: principal.accountId, team: false };
}

function teamScope(ctx: OperationContext, accountId: string | undefined): Scope {
  return { livemode: principalOf(ctx).livemode, team: true, ...(accountId ? { accountId } : {}) };
}

/** The columns naming the account and the contractor, as the scope discloses them. */
function parties(ctx: OperationContext, scope: Scope, order: Order): Record<string, Cell> {
  if (scope.team) return { account_id: order.account_id, contractor_id: order.contractor_id };
  return {
    contractor_ref: order.contractor_id ? ctx.services.refs.of(order.account_id, order.contractor_id) : null,
  };
}

const partyColumns = (scope: Scope) => (scope.team ? ["account_id", "contractor_id"] : ["contractor_ref"]);

/** Reads the scope's orders a page at a time, in (by, id) order. */
function ordersPages(
  ctx: OperationContext,
  scope: Scope,
  by: ExportQuery["by"],
  range: ExportRange,
  statuses: ExportQuery["statuses"],
) {
  return (after: Order | null) =>
    ctx.services.store.orders.exportPage({
      livemode: scope.livemode,
      ...(scope.accountId !== undefined ? { accountId: scope.accountId } : {}),
      by,
      from: range.from,
      to: range.to,
      ...(statuses !== undefined ? { statuses } : {}),
      ...(after ? { after: { at: (after[by] as string | null) ?? "", id: after.id } } : {}),
      limit: EXPORT_PAGE_ROWS,
    });
}

// --- Invoices ----------------------------------------------------------------------------------------

const ORDER_STATUS_OF_INVOICE: Record<InvoiceStatus, Order["status"]> = {
  submitted: "invoiced",
  revision_requested: "revision_requested",
  rejected: "invoice_rejected",
  approved: "approved",
  paid: "paid",
};

/** One invoice as the JSON Lines export writes it (the CSV flattens it to one row per line). */
function invoiceEntry(
  ctx: OperationContext,
  scope: Scope,
  order: Order,
  latest: InvoiceVersion,
  decisions: InvoiceDecision[],
) {
  const approval = decisions.findLast((d) => d.decision === "approved");
  const payment = decisions.findLast((d) => d.decision === "paid");
  return {
    order_id: order.id,
    reference_id: order.reference_id,
    ...parties(ctx, scope, order),
    trade: order.trade,
    status: INVOICE_STATUS[order.status] ?? "submitted",
    version: latest.version,
    itemised: !isUnitemised(latest.lines),
    lines: latest.lines,
    subtotal_cents: latest.subtotal_cents,
    tax_cents: latest.tax_cents,
    total_cents: latest.total_cents,
    currency: CURRENCY,
    invoiced_at: order.invoiced_at,
    submitted_at: latest.created_at,
    approved_at: approval?.decided_at ?? null,
    paid_on: payment?.paid_on ?? null,
    payment_reference: payment?.payment_reference ?? null,
    decisions: decisions.map((d) => ({
      decision: d.decision,
      version: d.version,
      total_cents: d.total_cents,
      reason_code: d.reason_code,
      note: d.note,
      payment_reference: d.payment_reference,
      paid_on: d.paid_on,
      decided_at: d.decided_at,
      by_policy: d.decided_by === POLICY_ACTOR,
      decided_by: d.decided_by === POLICY_ACTOR ? null : d.decided_by,
    })),
  };
}
type InvoiceEntry = ReturnType<typeof invoiceEntry>;

/** The page's invoices: each order's latest version (an order invoiced before versions were kept, its
 * total alone) and its decisions, read for the whole page in two queries. */
async function invoiceEntries(ctx: OperationContext, scope: Scope, orders: Order[]): Promise<InvoiceEntry[]> {
  const ids = orders.map((o) => o.id);
  const [versions, decisions] = await Promise.all([
    ctx.services.store.orders.invoiceVersionsOf(ids),
    ctx.services.store.orders.invoiceDecisionsOf(ids),
  ]);
  // Oldest first: the last version of each order is its latest.
  const latest = new Map(versions.map((v) => [v.order_id, v]));
  const decided = new Map<string, InvoiceDecision[]>();
  for (const d of decisions) {
    const list = decided.get(d.order_id);
    if (list) list.push(d);
    else decided.set(d.order_id, [d]);
  }
  return orders.map((order) => {
    const version = latest.get(order.id) ?? {
      order_id: order.id,
      version: 1,
      ...unitemised(order.invoice_cents ?? 0),
      created_at: order.invoiced_at ?? order.updated_at,
      created_by: `contractor:${order.contractor_id}`,
    };
    return invoiceEntry(ctx, scope, order, version, decided.get(order.id) ?? []);
  });
}

const INVOICE_LINE_COLUMNS = [
  "invoice_version",
  "line_number",
  "kind",
  "description",
  "part_number",
  "quantity",
  "unit_price_cents",
  "hours",
  "rate_cents",
  "amount_cents",
] as const;
const INVOICE_TOTAL_COLUMNS = [
  "subtotal_cents",
  "tax_cents",
  "total_cents",
  "currency",
  "invoiced_at",
  "submitted_at",
  "approved_at",
  "paid_on",
  "payment_reference",
] as const;

function invoiceColumns(scope: Scope): string[] {
  return [
    "order_id",
    "reference_id",
    ...partyColumns(scope),
    "trade",
    "status",
    ...INVOICE_LINE_COLUMNS,
    ...INVOICE_TOTAL_COLUMNS,
  ];
}

/** An invoice's CSV rows: one per line, each with the invoice's figures. */
function invoiceRows(entry: InvoiceEntry, columns: string[]): string {
  return entry.lines
    .map((line, i) => {
      const values: Record<string, unknown> = {
        ...entry,
        ...line,
        invoice_version: entry.version,
        line_number: i + 1,
      };
      return csvLine(columns.map((c) => (values[c] ?? null) as Cell));
    })
    .join("");
}

const invoiceQuery = {
  ...exportRangeShape,
  status: statusQuery(INVOICE_STATUSES),
};

/** The invoices' export for a scope. */
function invoicesExport(
  ctx: OperationContext,
  scope: Scope,
  input: { from: string; to: string; format: "csv" | "jsonl"; status?: string | undefined },
): TextStream {
  const range = exportRange(input);
  const statuses = statusList(input.status, INVOICE_STATUSES)?.map((s) => ORDER_STATUS_OF_INVOICE[s]) ?? [
    ...Object.values(ORDER_STATUS_OF_INVOICE),
  ];
  const columns = invoiceColumns(scope);
  const csv = input.format === "csv";
  const text = pagedText(
    csv ? csvLine(columns) : "",
    ordersPages(ctx, scope, "invoiced_at", range, statuses),
    async (orders) => {
      const entries = await invoiceEntries(ctx, scope, orders);
      return entries.map((e) => (csv ? invoiceRows(e, columns) : jsonLine(e))).join("");
    },
  );
  return new TextStream(
    EXPORT_MEDIA_TYPES[input.format],
    exportFilename("invoices", range, input.format),
    text,
  );
}

const INVOICES_FORMAT =
  "CSV (text/csv): a header row, then one row per invoice line: the order (order_id, reference_id, the " +
  "contractor), the invoice's status and version, the line (line_number, kind, description, part_number, " +
  "quantity, unit_price_cents, hours, rate_cents, amount_cents) and the invoice's totals, invoiced_at, " +
  "approved_at, paid_on and payment_reference. JSON Lines (application/x-ndjson): one invoice a line, with " +
  "its lines and decisions.";

const exportText = (format: string) => z.string().describe(format);

export const exportInvoicesOperation = defineOperation({
  id: "dispatchExportInvoices",
  name: "dispatch.export_invoices",
  summary: "Export your invoices (CSV or JSON Lines)",
  description:
    "Your orders' invoices in the key's mode, first invoiced (invoiced_at) from `from` to `to` (at most 366 " +
    "days), in the statuses asked for (submitted, revision_requested, rejected, approved, paid; all by " +
    "default), oldest first, as CSV (one row per invoice line) or JSON Lines (one invoice a line), written " +
    "as they are read. Any role of key. Text cells that could start a spreadsheet formula (=, +, -, @, tab, " +
    "CR) begin with an apostrophe. REST only.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/exports/invoices", input: "query" },
  textStream: { mediaTypes: [EXPORT_MEDIA_TYPES.csv, EXPORT_MEDIA_TYPES.jsonl] },
  input: z.strictObject(invoiceQuery),
  output: exportText(INVOICES_FORMAT),
  example: { from: "2026-11-01", to: "2026-11-30", status: "approved,paid", format: "csv" },
  async handler(ctx, input) {
    return invoicesExport(ctx, accountScope(ctx), input);
  },
});

const accountFilter = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .describe("Only this account's (its account id, acct_...).");

export const dispatcherExportInvoicesOperation = defineOperation({
  id: "dispatcherExportInvoices",
  name: "dispatcher.export_invoices",
  summary: "Export every account's invoices (CSV or JSON Lines)",
  description:
    "As dispatchExportInvoices, for every account's orders in the key's mode (or `account_id`'s), with " +
    "account_id and contractor_id columns. REST only.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/exports/invoices", input: "query" },
  textStream: { mediaTypes: [EXPORT_MEDIA_TYPES.csv, EXPORT_MEDIA_TYPES.jsonl] },
  input: z.strictObject({ ...invoiceQuery, account_id: accountFilter }),
  output: exportText(INVOICES_FORMAT),
  example: { from: "2026-11-01", to: "2026-11-30", format: "jsonl" },
  async handler(ctx, input) {
    return invoicesExport(ctx, teamScope(ctx, input.account_id), input);
  },
});

// --- Orders ------------------------------------------------------------------------------------------

/** One order as both formats write it. */
function orderEntry(ctx: OperationContext, scope: Scope, order: Order): Record<string, Cell> {
  return {
    order_id: order.id,
    reference_id: order.reference_id,
    ...parties(ctx, scope, order),
    trade: order.trade,
    urgency: order.urgency,
    status: order.status,
    state: order.state,
    zip: order.zip,
    city: order.city,
    created_at: order.created_at,
    received_at: order.received_at,
    accepted_at: order.accepted_at,
    completed_at: order.completed_at,
    invoiced_at: order.invoiced_at,
    estimated_cost_cents: order.estimated_cost_cents,
    nte_cents: order.nte_cents,
    nte_approved_cents: order.nte_approved_cents,
    final_cost_cents: order.final_cost_cents,
    invoice_cents: order.invoice_cents,
    currency: order.currency,
    recall_of: order.recall_of,
  };
}

const ORDER_COLUMNS = [
  "trade",
  "urgency",
  "status",
  "state",
  "zip",
  "city",
  "created_at",
  "received_at",
  "accepted_at",
  "completed_at",
  "invoiced_at",
  "estimated_cost_cents",
  "nte_cents",
  "nte_approved_cents",
  "final_cost_cents",
  "invoice_cents",
  "currency",
  "recall_of",
] as const;

const orderQuery = {
  ...exportRangeShape,
  status: statusQuery(ORDER_STATUSES),
};

function ordersExport(
  ctx: OperationContext,
  scope: Scope,
  input: { from: string; to: string; format: "csv" | "jsonl"; status?: string | undefined },
): TextStream {
  const range = exportRange(input);
  const statuses = statusList(input.status, ORDER_STATUSES);
  const csv = input.format === "csv";
  const columns = ["order_id", "reference_id", ...partyColumns(scope), ...ORDER_COLUMNS];
  const text = pagedText(
    csv ? csvLine(columns) : "",
    ordersPages(ctx, scope, "created_at", range, statuses),
    async (orders) =>
      orders
        .map((o) => {
          const entry = orderEntry(ctx, scope, o);
          return csv ? csvLine(columns.map((c) => entry[c] ?? null)) : jsonLine(entry);
        })
        .join(""),
  );
  return new TextStream(
    EXPORT_MEDIA_TYPES[input.format],
    exportFilename("orders", range, input.format),
    text,
  );
}

const ORDERS_FORMAT =
  "CSV (text/csv): a header row, then one row per order: order_id, reference_id, the contractor, trade, " +
  "urgency, status, state, zip, city, created_at, received_at, accepted_at, completed_at, invoiced_at, " +
  "estimated_cost_cents, nte_cents, nte_approved_cents, final_cost_cents, invoice_cents, currency, " +
  "recall_of. JSON Lines (application/x-ndjson): the same members, one order a line.";

export const exportOrdersOperation = defineOperation({
  id: "dispatchExportOrders",
  name: "dispatch.export_orders",
  summary: "Export your orders (CSV or JSON Lines)",
  description:
    "Your orders in the key's mode, created (created_at) from `from` to `to` (at most 366 days), in the " +
    "statuses asked for (all by default), oldest first, one per CSV row or JSON line, written as they are " +
    "read. Any role of key. Text cells that could start a spreadsheet formula begin with an apostrophe. " +
    "REST only.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/exports/orders", input: "query" },
  textStream: { mediaTypes: [EXPORT_MEDIA_TYPES.csv, EXPORT_MEDIA_TYPES.jsonl] },
  input: z.strictObject(orderQuery),
  output: exportText(ORDERS_FORMAT),
  example: { from: "2026-11-01", to: "2026-11-30", status: "completed,invoiced,approved,paid" },
  async handler(ctx, input) {
    return ordersExport(ctx, accountScope(ctx), input);
  },
});

export const dispatcherExportOrdersOperation = defineOperation({
  id: "dispatcherExportOrders",
  name: "dispatcher.export_orders",
  summary: "Export every account's orders (CSV or JSON Lines)",
  description:
    "As dispatchExportOrders, for every account's orders in the key's mode (or `account_id`'s), with " +
    "account_id and contractor_id columns. REST only.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/exports/orders", input: "query" },
  textStream: { mediaTypes: [EXPORT_MEDIA_TYPES.csv, EXPORT_MEDIA_TYPES.jsonl] },
  input: z.strictObject({ ...orderQuery, account_id: accountFilter }),
  output: exportText(ORDERS_FORMAT),
  example: { from: "2026-11-01", to: "2026-11-30", format: "jsonl" },
  async handler(ctx, input) {
    return ordersExport(ctx, teamScope(ctx, input.account_id), input);
  },
});
