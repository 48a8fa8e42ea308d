// `webhooks` CLI commands: an operator's view of an endpoint's delivery log, and redelivery.

import { parseArgs } from "node:util";
import type { Store } from "../storage/store.js";

export const WEBHOOKS_USAGE = `  webhooks deliveries --endpoint <endpoint-id> [--status pending|succeeded|failed|cancelled]
                      [--limit <n>]       an endpoint's delivery log, newest first, with every attempt
  webhooks redeliver <delivery-id>...     send deliveries again from now, fresh retry schedule, same
                                          webhook-id
  webhooks redeliver --endpoint <endpoint-id> --since <ISO time> [--enable]
                                          send again an endpoint's failed and cancelled deliveries
                                          created since then; --enable re-enables a disabled endpoint
`;

const STATUSES = ["pending", "succeeded", "failed", "cancelled"] as const;

export async function webhooksCommand(
  args: string[],
  store: Store,
  usage: (message: string) => Error,
  now: () => Date = () => new Date(),
): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      endpoint: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      since: { type: "string" },
      enable: { type: "boolean" },
    },
  });
  if (sub === "deliveries") return deliveries(store, values, usage);
  if (sub === "redeliver") return redeliver(store, positionals, values, usage, now().toISOString());
  throw usage(`unknown webhooks command ${sub ?? "(none)"}`);
}

type WebhooksValues = {
  endpoint?: string | undefined;
  status?: string | undefined;
  limit?: string | undefined;
  since?: string | undefined;
  enable?: boolean | undefined;
};

const out = (line: string) => process.stdout.write(`${line}\n`);

/** `webhooks deliveries`: an endpoint's delivery log with every attempt. */
async function deliveries(
  store: Store,
  values: WebhooksValues,
  usage: (message: string) => Error,
): Promise<number> {
  const webhooks = store.webhooks;
  if (!values.endpoint) throw usage("webhooks deliveries needs --endpoint <endpoint-id>");
  const status = values.status as (typeof STATUSES)[number] | undefined;
  if (status !== undefined && !STATUSES.includes(status))
    throw usage(`--status must be one of: ${STATUSES.join(", ")}`);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw usage("--limit must be 1-1000");
  const endpoint = await webhooks.endpointById(values.endpoint);
  if (!endpoint) {
    process.stderr.write(`no webhook endpoint ${values.endpoint}\n`);
    return 1;
  }
  out(
    `${endpoint.id} ${endpoint.url} ${endpoint.status}${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ""}`,
  );
  const rows = await webhooks.listDeliveries({
    accountId: endpoint.account_id,
    livemode: endpoint.livemode === 1,
    endpointId: endpoint.id,
    status,
    limit,
  });
  const attempts = await webhooks.attemptsOf(rows.map((r) => r.id));
  for (const row of rows) {
    out(
      `${row.id}  ${row.event_type}  ${row.order_id}  ${row.status}  attempts=${row.attempts}` +
        `${row.next_attempt_at && row.status === "pending" ? `  next=${row.next_attempt_at}` : ""}`,
    );
    for (const a of attempts.filter((x) => x.delivery_id === row.id)) {
      out(
        `    #${a.attempt} ${a.started_at} ${a.duration_ms}ms ${a.status_code ?? "-"} ${a.outcome}${a.error ? ` ${a.error}` : ""}`,
      );
    }
  }
  return 0;
}

/** `webhooks redeliver`: deliveries sent again, by id or by endpoint and time. */
async function redeliver(
  store: Store,
  positionals: string[],
  values: WebhooksValues,
  usage: (message: string) => Error,
  at: string,
): Promise<number> {
  const webhooks = store.webhooks;
  if (positionals.length > 0) {
    if (values.endpoint || values.since) throw usage("give delivery ids or --endpoint/--since, not both");
    const known = await Promise.all(positionals.map((id) => webhooks.deliveryById(id)));
    const missing = positionals.filter((_, i) => !known[i]);
    if (missing.length > 0) {
      process.stderr.write(`no webhook delivery ${missing.join(", ")}\n`);
      return 1;
    }
    for (const delivery of known) {
      const endpoint = delivery ? await webhooks.endpointById(delivery.endpoint_id) : undefined;
      if (endpoint?.status !== "enabled") {
        process.stderr.write(
          `endpoint ${delivery?.endpoint_id} of ${delivery?.id} is disabled: redeliver with --endpoint ... --enable\n`,
        );
        return 1;
      }
    }
    const n = await webhooks.redeliver({ ids: positionals }, at);
    out(`${n} deliveries queued again (pending ones were already on their way)`);
    return 0;
  }
  if (!values.endpoint || !values.since) {
    throw usage("webhooks redeliver needs <delivery-id>..., or --endpoint <endpoint-id> --since <ISO time>");
  }
  if (Number.isNaN(Date.parse(values.since))) throw usage("--since must be an ISO 8601 time");
  const endpoint = await webhooks.endpointById(values.endpoint);
  if (!endpoint) {
    process.stderr.write(`no webhook endpoint ${values.endpoint}\n`);
    return 1;
  }
  if (endpoint.status !== "enabled") {
    if (!values.enable) {
      process.stderr.write(
        `endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason ?? "no reason"}): add --enable to re-enable it\n`,
      );
      return 1;
    }
    await webhooks.enableEndpoint(endpoint.id, at);
    out(`endpoint ${endpoint.id} enabled again`);
  }
  const since = new Date(values.since).toISOString();
  const n = await webhooks.redeliver({ endpointId: endpoint.id, since }, at);
  out(`${n} deliveries queued again`);
  return 0;
}
