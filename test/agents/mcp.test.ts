// MCP through the official SDK client (Client + StreamableHTTPClientTransport) against the service
// listening on 127.0.0.1: every operation is a tool, listed with schemas and annotations from the registry
// to the callers whose key may use it, and calling each returns structuredContent that matches its
// outputSchema, plus the same JSON as text. A caller without a key of its own gets dispatch.quote,
// dispatch.order and dispatch.order_status under the server's key (MCP_API_KEY, else on a fresh store the
// sandbox key) and nothing else keyed. Malformed JSON-RPC is answered with the code that names the fault.

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_ACCOUNT, SANDBOX_KEY_LABEL, sandboxKeyOf } from "../../src/auth/sandbox-key.js";
import type { Access } from "../../src/operations/kernel/operation.js";
import { AGENT_OPERATIONS as OPERATIONS } from "../../src/operations/registry.js";
import { createNotificationDispatcher } from "../../src/services/create-services.js";
import { runsOnServerKey } from "../../src/transports/agent-call.js";
import { buildApp } from "../../src/transports/http/app.js";
import { mcpTools } from "../../src/transports/mcp.js";
import { startChildServer } from "../helpers/child-server.js";
import { austinCrew, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { multipart } from "../helpers/multipart.js";
import { exemplary, type Storefront, startStorefront } from "../helpers/storefronts.js";

let h: Harness;
let base: string;
let shop: Storefront;
/** The account key this server applies on callers' behalf (MCP_API_KEY), also sent by callers as their own. */
let accountKey: string;

async function listen(harness: Harness): Promise<string> {
  await harness.app.listen({ port: 0, host: "127.0.0.1" });
  return `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "field-dispatch-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const text = (r: CallToolResult) => (r.content[0]?.type === "text" ? r.content[0].text : "");

beforeAll(async () => {
  shop = await startStorefront(exemplary); // for agentic.readiness_probe
  h = await createHarness({
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000",
    PUBLIC_RATE_LIMIT_BURST: "100000",
    // The walk through every operation is more calls than one client's agent burst (60).
    AGENT_RATE_LIMIT_PER_MINUTE: "100000",
    AGENT_RATE_LIMIT_BURST: "100000",
    PROBE_ALLOW_PRIVATE_NETWORKS: "true",
    PROBE_ALLOWED_PORTS: String(shop.port),
  });
  // The examples' orders (plumbing, downtown Austin) go to contractors free whatever the hour.
  await h.services.store.contractors.insert(austinCrew("mcp"), testRecord());
  await h.services.pool.load();
  // The server-side key keyed tools run under (MCP_API_KEY): an account's own key.
  accountKey = await h.key("mcp-account", "test");
  (h.services.config as { MCP_API_KEY?: string }).MCP_API_KEY = accountKey;
  base = await listen(h);
});
afterAll(async () => {
  await h.close();
  await shop.close();
});

/** The names of the operations a key of this access may use, with the public ones and those any key opens. */
const namesFor = (access: Access | null) =>
  OPERATIONS.filter(
    (o) => o.access === "public" || o.access === access || (o.access === "any_key" && access !== null),
  )
    .map((o) => o.name)
    .sort();

/** The names of the tools a caller without a key of its own may use: the public ones, and those the
 * server's key stands in for. */
const namesOnServerKey = () =>
  OPERATIONS.filter((o) => o.access === "public" || runsOnServerKey(o))
    .map((o) => o.name)
    .sort();

async function listedNames(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = await connect(url, headers);
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((t) => t.name).sort();
}

describe("MCP tools", () => {
  it("lists every operation as a tool for some kind of key, with input and output schemas", async () => {
    const client = await connect(`${base}/api/mcp`);
    const { tools } = await client.listTools();
    for (const name of ["dispatch.quote", "dispatch.order", "dispatch.evals", "dispatch.index"]) {
      expect(tools.some((t) => t.name === name)).toBe(true);
    }
    expect(
      mcpTools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(OPERATIONS.map((o) => o.name).sort());
    for (const tool of mcpTools()) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description?.length ?? 0).toBeGreaterThan(40);
    }
    await client.close();
  });

  it("lists the public tools and those of the key in use: an account's, a contractor's or the dispatch team's", async () => {
    // The server's MCP_API_KEY here is an account's key: a caller without a key of its own gets the tools
    // it stands in for; a caller sending an account's key gets every account tool.
    expect(await listedNames(`${base}/api/mcp`)).toEqual(namesOnServerKey());
    expect(await listedNames(`${base}/api/mcp`, { "x-api-key": accountKey })).toEqual(namesFor("key"));
    const contractor = (await h.services.store.contractors.load()).find((c) => c.pool === "sandbox");
    const crew = await h.services.keys.issue({
      accountName: "crew-list",
      mode: "test",
      actor: "operator:test",
      kind: "contractor",
      contractorId: contractor?.id as string,
    });
    expect(await listedNames(`${base}/api/mcp`, { "x-api-key": crew.key })).toEqual(namesFor("contractor"));
    const ops = await h.dispatcherKey("test");
    expect(await listedNames(`${base}/api/mcp`, { "x-api-key": ops })).toEqual(namesFor("dispatcher"));
    // A key that does not authenticate opens nothing: the public tools only.
    expect(await listedNames(`${base}/api/mcp`, { "x-api-key": "fsd_test_nope" })).toEqual(namesFor(null));
    expect(namesFor(null).every((n) => OPERATIONS.find((o) => o.name === n)?.access === "public")).toBe(true);
  });

  it("annotates each tool from its operation's effect: reads, writes, destructive changes, idempotency", async () => {
    const ops = await h.dispatcherKey("test");
    const client = await connect(`${base}/api/mcp`, { "x-api-key": accountKey });
    const dispatcher = await connect(`${base}/api/mcp`, { "x-api-key": ops });
    const tools = [...(await client.listTools()).tools, ...(await dispatcher.listTools()).tools];
    const hints = (name: string) => tools.find((t) => t.name === name)?.annotations;
    for (const cancel of [
      "dispatch.order_cancel",
      "dispatcher.cancel",
      "dispatcher.pool",
      "dispatcher.assign",
    ]) {
      expect(hints(cancel), cancel).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    for (const read of [
      "dispatch.order_status",
      "dispatch.evals",
      "dispatch.estimate",
      "dispatcher.orders",
    ]) {
      expect(hints(read), read).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
      });
    }
    // dispatch.order replays under an idempotency_key; a quote is a new record each time.
    expect(hints("dispatch.order")).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(hints("dispatch.quote")).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    });
    // Setting a contractor's standing again leaves it as it is: destructive, and idempotent without a key.
    expect(hints("dispatcher.pool")).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    // A cancellation or an assignment done again is not the same call: not idempotent.
    for (const name of ["dispatch.order_cancel", "dispatcher.assign"])
      expect(hints(name)?.idempotentHint, name).toBe(false);
    // Only the probe reaches out to hosts its caller names.
    expect(hints("agentic.readiness_probe")).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(hints("dispatch.quote")?.openWorldHint).toBe(false);
    // Every operation REST serves on GET is a read.
    for (const op of OPERATIONS) if (op.http.method === "GET") expect(op.effect, op.name).toBe("read");
    await client.close();
    await dispatcher.close();
  });

  it("calls every tool; each result validates against the tool's outputSchema and repeats it as text", async () => {
    // An account's tools under its own key, sent by its MCP client.
    const client = await connect(`${base}/api/mcp`, { "x-api-key": accountKey });
    await client.listTools(); // from here on the client itself checks outputs too
    const tools = mcpTools(); // every tool's schema, whichever key's client calls it
    const validator = new AjvJsonSchemaValidator();
    const called = new Set<string>();
    const call = async (name: string, args: Record<string, unknown>, as: Client = client) => {
      const result = (await as.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, `${name}: ${text(result)}`).toBeFalsy();
      const tool = tools.find((t) => t.name === name);
      const check = validator.getValidator(tool?.outputSchema as never)(result.structuredContent);
      expect(check.valid, `${name}: ${check.errorMessage}`).toBe(true);
      expect(JSON.parse(text(result))).toEqual(result.structuredContent);
      called.add(name);
      return result.structuredContent as Record<string, unknown>;
    };
    const example = (name: string) =>
      OPERATIONS.find((o) => o.name === name)?.example as Record<string, unknown>;
    const order = await call("dispatch.order", example("dispatch.order"));
    const second = await call("dispatch.order", example("dispatch.order"));
    // A photo of the problem, added by the account over REST (agents do not upload): downloaded below.
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#e33" } })
      .jpeg()
      .toBuffer();
    const form = multipart([{ name: "file", value: photo, filename: "leak.jpg", type: "image/jpeg" }]);
    const added = await h.app.inject({
      method: "POST",
      url: `/api/orders/${order.order_id}/attachments`,
      headers: { "content-type": form.type, "x-api-key": accountKey },
      payload: form.body,
    });
    expect(added.statusCode, added.body).toBe(200);
    const attachment = added.json() as { attachment_id: string };
    await h.services.audit.sequence(true);
    const size = ((await call("attest.checkpoint", {})) as { tree_size: number }).tree_size;

    // Contractor tools run under the contractor's own key, sent by its MCP client.
    const contractorClient = async (orderId: string) => {
      const [row] = await h.services.store.orders.byIds([orderId]);
      const key = await h.services.keys.issue({
        accountName: "crew",
        mode: "test",
        actor: "operator:test",
        kind: "contractor",
        contractorId: row?.contractor_id as string,
      });
      const c = await connect(`${base}/api/mcp`, { "x-api-key": key.key });
      await c.listTools();
      return c;
    };
    // The account's checklist for its plumbing jobs: one required item, answered below before completion.
    const template = await call("checklist.template_create", {
      trade: "plumbing",
      name: "Agent's checklist",
      items: [{ kind: "yes_no", label: "Water shut off", required: true }],
    });
    const first = await contractorClient(order.order_id as string);
    const offers = (await call("contractor.offers", {}, first)).offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    const offer = offers.find((o) => o.order_id === order.order_id);
    await call("contractor.accept_offer", { offer_id: offer?.offer_id }, first);
    await call("contractor.jobs", {}, first);
    await call(
      "contractor.report_status",
      { order_id: order.order_id, status: "en_route", eta_minutes: 15 },
      first,
    );
    const nte = await call(
      "contractor.request_nte",
      { order_id: order.order_id, requested_nte_cents: 60_000, reason: "corroded supply line" },
      first,
    );
    await call("dispatch.nte_decision", {
      order_id: order.order_id,
      request_id: nte.request_id,
      decision: "approve",
    });
    await call("contractor.report_status", { order_id: order.order_id, status: "on_site" }, first);
    // The job's checklist: the sandbox's starter plumbing checklist (one required yes/no), then the
    // account's own; every required item answered before completion.
    const job = await call("order.checklist", { order_id: order.order_id }, first);
    const required = (job.items as Array<{ item_id: string; label: string; required: boolean }>).filter(
      (i) => i.required,
    );
    expect(required.map((i) => i.label)).toEqual(["Leak stopped", "Water shut off"]);
    const answered = await call(
      "contractor.checklist_answer",
      { order_id: order.order_id, answers: required.map((i) => ({ item_id: i.item_id, value: true })) },
      first,
    );
    expect(answered.unanswered_required).toEqual([]);
    await call(
      "contractor.report_status",
      { order_id: order.order_id, status: "completed", final_cost_cents: 52_000 },
      first,
    );
    await call(
      "contractor.invoice",
      {
        order_id: order.order_id,
        lines: [
          { kind: "labour", hours: 2, rate_cents: 20_000 },
          { kind: "materials", description: "Supply line", quantity: 1, unit_price_cents: 10_000 },
        ],
        amount_cents: 50_000,
      },
      first,
    );
    const revised = await call(
      "contractor.invoice_revise",
      { order_id: order.order_id, lines: [{ kind: "labour", hours: 2.5, rate_cents: 20_000 }] },
      first,
    );
    expect(revised).toMatchObject({ version: 2, total_cents: 50_000 });
    expect((await call("order.invoice", { order_id: order.order_id })).version).toBe(2);
    // The account approves version 2 and records its payment; its admin key lists its keys and sets one.
    const approved = await call("dispatch.invoice_decision", {
      order_id: order.order_id,
      decision: "approve",
      version: 2,
    });
    expect(approved.status).toBe("approved");
    const paid = await call("dispatch.invoice_paid", {
      order_id: order.order_id,
      payment_reference: "ACH-1",
      paid_on: new Date().toISOString().slice(0, 10),
    });
    expect(paid.status).toBe("paid");
    const [ownKey] = (await call("dispatch.keys", {})).keys as Array<{ id: string }>;
    await call("dispatch.key_role_set", { key_id: ownKey?.id, role: "admin" });
    // Sites and assets: a site, an asset at it, an order naming both (its location from the site), the
    // asset's history, then both archived.
    const site = await call("dispatch.site_create", example("dispatch.site_create"));
    await call("dispatch.site_update", { site_id: site.site_id, hours: "mon-sun 06:00-22:00" });
    await call("dispatch.site_import", example("dispatch.site_import"));
    await call("dispatch.sites", { state: "TX" });
    const asset = await call("dispatch.asset_create", {
      ...example("dispatch.asset_create"),
      site_id: site.site_id,
    });
    await call("dispatch.asset_update", { asset_id: asset.asset_id, tags: ["roof"] });
    await call("dispatch.assets", { site_id: site.site_id });
    const { location: _location, ...siteJob } = example("dispatch.order");
    const sited = await call("dispatch.order", {
      ...siteJob,
      site_id: site.site_id,
      asset_ids: [asset.asset_id],
    });
    expect((sited.site as { site_id: string }).site_id).toBe(site.site_id);
    const history = await call("dispatch.asset_history", { asset_id: asset.asset_id });
    expect((history.orders as Array<{ order_id: string }>).map((o) => o.order_id)).toEqual([sited.order_id]);
    await call("dispatch.site", { site_id: site.site_id });
    // A maintenance plan at the site: created, changed, listed, read; its next occurrence becomes its
    // order now (moved to its own window), the one after is skipped.
    const pm = await call("dispatch.plan_create", {
      ...example("dispatch.plan_create"),
      site_id: site.site_id,
      recurrence: "FREQ=WEEKLY",
      window: { days: ["mon", "tue", "wed", "thu", "fri", "sat"], start: "08:00", end: "20:00" },
    });
    await call("dispatch.plan_update", { plan_id: pm.plan_id, name: "Weekly filter check" });
    await call("dispatch.plans", { site_id: site.site_id });
    const upcoming = (await call("dispatch.plan", { plan_id: pm.plan_id })).occurrences as Array<{
      occurrence_key: string;
      window: { start: string; end: string };
    }>;
    const [next, after] = upcoming;
    const moved = await call("dispatch.occurrence_move", {
      plan_id: pm.plan_id,
      occurrence_key: next?.occurrence_key,
      service_window: next?.window,
      reason: "booked now by the agent",
    });
    expect(moved.order_id).toMatch(/^ord_/);
    await call("dispatch.occurrence_skip", {
      plan_id: pm.plan_id,
      occurrence_key: after?.occurrence_key,
      reason: "store closed",
    });
    await call("dispatch.occurrences", { site_id: site.site_id });
    await call("dispatch.plan_archive", { plan_id: pm.plan_id });
    await call("dispatch.maintenance_compliance", { period: "rolling_90d" });
    // The site's request link, and requests: the agent reports one, reads and lists them, the policy
    // set and read; one approved (an order), one rejected; the link rotated.
    const requestLink = await call("dispatch.request_link", { site_id: site.site_id });
    expect(requestLink.url).toMatch(/\/r\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    await call("dispatch.request_policy_set", { mode: "hold" });
    expect((await call("dispatch.request_policy", {})).mode).toBe("hold");
    const report = { site_id: site.site_id, name: "Dana", contact: "+1-512-555-0142" };
    const leak = await call("dispatch.request_create", {
      ...report,
      description: "Toilet clogged and leaking",
    });
    expect(leak).toMatchObject({ status: "pending", trade_guess: { trade: "plumbing" } });
    await call("dispatch.request", { request_id: leak.request_id });
    await call("dispatch.requests", { status: "pending" });
    // An open plumbing order at the site already (above): the request is linked to it, not doubled.
    const linked = await call("dispatch.request_approve", { request_id: leak.request_id });
    expect(linked.status).toBe("linked");
    expect(linked.order_id).toMatch(/^ord_/);
    const vague = await call("dispatch.request_create", { ...report, description: "Something odd" });
    expect(
      (await call("dispatch.request_reject", { request_id: vague.request_id, reason: "no detail" })).status,
    ).toBe("rejected");
    await call("dispatch.request_link_rotate", { site_id: site.site_id, reason: "by the agent" });
    await call("dispatch.asset_archive", { asset_id: asset.asset_id });
    await call("dispatch.site_archive", { site_id: site.site_id });
    // The order's tracking link: issued, listed, revoked (its page then answers 404).
    const link = await call("dispatch.tracking_link", { order_id: order.order_id });
    expect(link.url).toMatch(/\/t\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    await call("dispatch.tracking_links", { order_id: order.order_id });
    expect(
      (await call("dispatch.tracking_link_revoke", { order_id: order.order_id, reason: "by the agent" }))
        .state,
    ).toBe("revoked");
    // Notifications: the order at the site cancelled (its contact hears of it); with no SMTP server the
    // worker keeps the message. The agent lists, reads and resends it, and sets who receives them.
    await call("dispatch.order_cancel", { order_id: sited.order_id });
    await createNotificationDispatcher(h.services).tick();
    const notified = (await call("dispatch.notifications", { order_id: sited.order_id }))
      .notifications as Array<{
      notification_id: string;
    }>;
    expect(notified[0]).toMatchObject({ event: "cancelled", status: "kept" });
    await call("dispatch.notification", { notification_id: notified[0]?.notification_id });
    await call("dispatch.notification_resend", { notification_id: notified[0]?.notification_id });
    await call("dispatch.notification_subscribers_set", example("dispatch.notification_subscribers_set"));
    await call("dispatch.notification_subscribers", {});
    await call("dispatch.notification_opt_out", example("dispatch.notification_opt_out"));
    const rated = await call("dispatch.order_rate", {
      order_id: order.order_id,
      quality: 5,
      timeliness: 4,
      communication: 5,
      value: 3,
      comment: "rated by the agent",
    });
    expect(rated).toMatchObject({ overall: 4.25, edits: 0 });
    expect((await call("order.rating", { order_id: order.order_id })).quality).toBe(5);
    expect((await call("contractor.ratings", {}, first)).count).toBeGreaterThan(0);
    const off = await call("contractor.time_off_add", example("contractor.time_off_add"), first);
    await call("contractor.time_off", {}, first);
    await call("contractor.time_off_remove", { time_off_id: off.time_off_id }, first);
    const mine = await call("contractor.audit", { order_id: order.order_id }, first);
    expect((mine.records as unknown[]).length).toBeGreaterThan(1);
    const other = await contractorClient(second.order_id as string);
    const theirs = (await call("contractor.offers", {}, other)).offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    await call(
      "contractor.decline_offer",
      { offer_id: theirs.find((o) => o.order_id === second.order_id)?.offer_id, reason: "booked" },
      other,
    );
    // Counter-offers: the contractor offered a job asks more; the account's agent accepts one counter and
    // declines another.
    for (const answer of ["dispatch.counter_accept", "dispatch.counter_decline"]) {
      const job = await call("dispatch.order", example("dispatch.order"));
      const asker = await contractorClient(job.order_id as string);
      const mineOffers = (await call("contractor.offers", {}, asker)).offers as Array<{
        offer_id: string;
        order_id: string;
      }>;
      const made = await call(
        "contractor.counter_offer",
        {
          offer_id: mineOffers.find((o) => o.order_id === job.order_id)?.offer_id,
          price_cents: (job.estimated_cost_cents as number) + 2_500,
          note: "access from the roof",
        },
        asker,
      );
      expect(made.counter).toMatchObject({ status: "pending" });
      const status = await call("dispatch.order_status", { order_id: job.order_id });
      expect(status.counter).toMatchObject({ status: "pending" });
      const answered = await call(answer, { order_id: job.order_id });
      expect(answered.counter).toMatchObject({
        status: answer === "dispatch.counter_accept" ? "accepted" : "declined",
      });
      await asker.close();
    }
    // Dispatcher tools run under the dispatch team's key.
    const dispatcherKey = await h.dispatcherKey("test");
    const ops = await connect(`${base}/api/mcp`, { "x-api-key": dispatcherKey });
    await ops.listTools();
    const [held] = await h.services.store.orders.byIds([order.order_id as string]);
    await call("dispatcher.orders", { limit: 5 }, ops);
    await call("dispatcher.order", { order_id: order.order_id }, ops);
    await call(
      "dispatcher.assign",
      { order_id: second.order_id, contractor_id: held?.contractor_id, reason: "asked for by name" },
      ops,
    );
    await call(
      "dispatcher.pool",
      { contractor_id: held?.contractor_id, action: "include", reason: "checked" },
      ops,
    );
    const found = await call("dispatcher.contractors", example("dispatcher.contractors"), ops);
    expect((found.contractors as unknown[]).length).toBeGreaterThan(0);
    await call("dispatcher.contractor", { contractor_id: held?.contractor_id }, ops);
    const teamSites = (await call("dispatcher.sites", {}, ops)).sites as Array<{ site_id: string }>;
    await call("dispatcher.site", { site_id: teamSites[0]?.site_id }, ops);
    await call("dispatcher.audit", { order_id: order.order_id }, ops);
    const today = new Date().toISOString().slice(0, 10);
    const proposal = await call("dispatch.schedule_optimize", { date: today, time_limit_ms: 100 }, ops);
    await call("dispatch.schedule_apply", { proposal_id: proposal.proposal_id }, ops);
    const lanes = await call("dispatch.schedule_lanes", { date: today, sort: "load", limit: 5 }, ops);
    expect(typeof lanes.total).toBe("number");
    const set = { ...example("dispatcher.time_off_add"), contractor_id: held?.contractor_id };
    const theirOff = await call("dispatcher.time_off_add", set, ops);
    await call("dispatcher.time_off", { contractor_id: held?.contractor_id }, ops);
    await call("dispatcher.time_off_remove", { time_off_id: theirOff.time_off_id, reason: "back" }, ops);
    // A scheduled order's window moved a week on (the same local hours), by the dispatch team.
    const scheduled = await call("dispatch.order", {
      ...(example("dispatch.order") as object),
      urgency: "scheduled",
    });
    const booked = scheduled.arrival_window as { start: string; end: string };
    const week = (iso: string) => new Date(Date.parse(iso) + 7 * 86_400_000).toISOString();
    await call(
      "dispatcher.reschedule",
      {
        order_id: scheduled.order_id,
        service_window: { start: week(booked.start), end: week(booked.end) },
        reason: "the store is closed that day",
      },
      ops,
    );
    await call("dispatcher.cancel", { order_id: scheduled.order_id, reason: "done with it" }, ops);
    const third = await call("dispatch.order", example("dispatch.order"));
    await call("dispatcher.cancel", { order_id: third.order_id, reason: "duplicate" }, ops);
    await call("dispatch.order_cancel", { order_id: second.order_id, reason: "no longer needed" });
    // Webhooks: a secret, a default endpoint, and the deliveries of the events above.
    expect((await call("dispatch.webhooks_rotate_secret", {})).secret).toMatch(/^whsec_/);
    await call("dispatch.webhooks_set_endpoint", { url: "https://hooks.example.com/dispatch" });
    // An order placed with the endpoint set: its event has a recipient, so it is written.
    await call("dispatch.order", example("dispatch.order"));
    await h.services.store.webhooks.fanOut(1000, new Date().toISOString());
    const hooks = (await call("dispatch.webhooks_deliveries", { limit: 5 })).deliveries as Array<{
      delivery_id: string;
      endpoint_id: string;
    }>;
    expect(hooks.length).toBeGreaterThan(0);
    await call("dispatch.webhooks_redeliver", { delivery_id: hooks[0]?.delivery_id });
    await call("dispatch.webhooks_enable_endpoint", { endpoint_id: hooks[0]?.endpoint_id });
    await call("dispatch.webhooks", {});
    // The account's do-not-dispatch list: the contractor of its first order, named by the handle the order
    // shows, excluded, listed (by the account and by the dispatch team), then taken off again.
    const excluded = await call("dispatch.do_not_dispatch_add", {
      contractor_ref: order.contractor_ref,
      reason: "left the site unsafe",
    });
    await call("dispatch.do_not_dispatch", {});
    await call("dispatcher.do_not_dispatch", {}, ops);
    await call("dispatch.do_not_dispatch_remove", { entry_id: excluded.entry_id, reason: "trying again" });
    await first.close();
    await other.close();
    await ops.close();

    const dynamic: Record<string, Record<string, unknown>> = {
      "dispatch.order_status": { order_id: order.order_id },
      "attest.verify": { seal: order.seal },
      "attest.checkpoint_at": { tree_size: size },
      "attest.consistency": { first: 1, second: size },
      "audit.list": { order_id: order.order_id },
      "order.attachments": { order_id: order.order_id },
      "order.checklist": { order_id: order.order_id },
      "checklist.template_retire": { template_id: template.template_id },
      "agentic.readiness_probe": { url: `${shop.origin}/` },
    };
    // Downloads: the descriptor as structured content, the bytes as an embedded resource whose digest is
    // the descriptor's, and the URL REST serves them at.
    const owned = { order_id: order.order_id, attachment_id: attachment.attachment_id };
    for (const [name, args, type] of [
      ["order.attachment_content", owned, "image/jpeg"],
      ["order.attachment_thumbnail", owned, "image/webp"],
      ["order.report", { order_id: order.order_id }, "application/pdf"],
    ] as const) {
      const file = (await call(name, args)) as { sha256: string; url: string; inline: boolean };
      expect(file, name).toMatchObject({ media_type: type, inline: true });
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const resource = result.content[1];
      if (resource?.type !== "resource" || !("blob" in resource.resource))
        throw new Error(`${name}: no bytes`);
      expect(resource.resource).toMatchObject({ uri: file.url, mimeType: type });
      const bytes = Buffer.from(resource.resource.blob, "base64");
      expect(createHash("sha256").update(bytes).digest("hex"), name).toBe(file.sha256);
      const rest = await fetch(file.url, { headers: { "x-api-key": accountKey } });
      expect(rest.status, name).toBe(200);
      expect(rest.headers.get("etag"), name).toBe(`"${file.sha256}"`);
    }
    for (const op of OPERATIONS) {
      if (called.has(op.name)) continue;
      await call(op.name, dynamic[op.name] ?? example(op.name));
    }
    expect([...called].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    await client.close();
  });

  it("answers failures as isError results carrying the REST problem, with its code", async () => {
    const client = await connect(`${base}/api/mcp`);
    const bad = (await client.callTool({
      name: "dispatch.quote",
      arguments: { trade: "plumbing", location: { state: "Texas" } },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    const problem = JSON.parse(text(bad));
    expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
    expect(problem.errors[0].field).toBe("location.state");
    const missing = (await client.callTool({
      name: "attest.verify",
      arguments: { seal: "seal_0000000000000000000000" },
    })) as CallToolResult;
    expect(JSON.parse(text(missing)).code).toBe("not_found");
    await expect(client.callTool({ name: "dispatch.nothing", arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
    await client.close();
  });

  it("lists underscore names only on /api/mcp/compat, and accepts both spellings on either", async () => {
    const compat = await connect(`${base}/api/mcp/compat`);
    const { tools } = await compat.listTools();
    expect(tools.map((t) => t.name)).toContain("dispatch_quote");
    expect(tools.some((t) => t.name.includes("."))).toBe(false);
    const viaCompat = (await compat.callTool({ name: "dispatch_index", arguments: {} })) as CallToolResult;
    expect(viaCompat.isError).toBeFalsy();
    await compat.close();
    const main = await connect(`${base}/api/mcp`);
    expect((await main.listTools()).tools.some((t) => t.name.includes("_quote"))).toBe(false);
    const alias = (await main.callTool({ name: "dispatch_index", arguments: {} })) as CallToolResult;
    expect(alias.isError).toBeFalsy();
    await main.close();
  });

  it("answers GET and DELETE with 405, and refuses a foreign Origin", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${base}/api/mcp`, { method, headers: { accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
    const foreign = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: {
        origin: "http://evil.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { code: string }).code).toBe("forbidden_origin");
  });
});

describe("MCP without a server-side key, and its per-IP limit", () => {
  let open: Harness;
  let openBase: string;
  beforeAll(async () => {
    open = await createHarness({
      AGENT_RATE_LIMIT_PER_MINUTE: "1",
      AGENT_RATE_LIMIT_BURST: "3",
      MCP_USE_SANDBOX_KEY: "false",
    });
    openBase = await listen(open);
  });
  afterAll(() => open.close());

  it("answers keyed tools with dispatch_not_configured, serves public ones, then limits the client", async () => {
    expect(await listedNames(`${openBase}/api/mcp`)).toEqual(namesFor(null));
    const client = await connect(`${openBase}/api/mcp`);
    const keyed = (await client.callTool({
      name: "dispatch.quote",
      arguments: { trade: "plumbing", location: { state: "TX" } },
    })) as CallToolResult;
    expect(keyed.isError).toBe(true);
    expect(JSON.parse(text(keyed)).code).toBe("dispatch_not_configured");
    const index = (await client.callTool({ name: "dispatch.index", arguments: {} })) as CallToolResult;
    expect(index.isError).toBeFalsy();
    await client.callTool({ name: "dispatch.index", arguments: {} });
    const limited = (await client.callTool({ name: "dispatch.index", arguments: {} })) as CallToolResult;
    expect(limited.isError).toBe(true);
    expect(JSON.parse(text(limited))).toMatchObject({ code: "rate_limited", status: 429 });
    await client.close();
  });
});

describe("MCP on a fresh store, with no MCP_API_KEY", () => {
  const quote = { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "urgent" };

  it("runs keyed tools under the first-start sandbox key: test mode, the sandbox account", async () => {
    const fresh = await createHarness();
    const url = `${await listen(fresh)}/api/mcp`;
    expect(fresh.config.MCP_API_KEY).toBeUndefined();
    expect(await listedNames(url)).toEqual(namesOnServerKey());
    const client = await connect(url);
    const result = (await client.callTool({ name: "dispatch.quote", arguments: quote })) as CallToolResult;
    expect(result.isError, text(result)).toBeFalsy();
    const made = result.structuredContent as { quote_id: string; livemode: boolean };
    expect(made.livemode).toBe(false);
    // The quote is the sandbox account's: its own key (printed at first start) finds its record.
    const audit = await fresh.get("/api/audit?kind=quote.issued", { "x-api-key": fresh.sandboxKey });
    expect(audit.body).toContain(made.quote_id);
    await client.close();

    // A caller's own key still wins: a live key of another account quotes live.
    const live = await fresh.key("own-live", "live");
    const own = await connect(url, { "x-api-key": live });
    const mine = (await own.callTool({ name: "dispatch.quote", arguments: quote })) as CallToolResult;
    expect(mine.isError, text(mine)).toBeFalsy();
    expect((mine.structuredContent as { livemode: boolean }).livemode).toBe(true);
    await own.close();

    // Revoked, the sandbox key is no longer used, and a restart does not find it again.
    const stored = await sandboxKeyOf(fresh.services.store);
    await fresh.services.keys.revoke(stored?.id as string, "operator:test");
    const after = await connect(url);
    const refused = (await after.callTool({ name: "dispatch.quote", arguments: quote })) as CallToolResult;
    expect(JSON.parse(text(refused)).code).toBe("dispatch_not_configured");
    expect(await listedNames(url)).toEqual(namesFor(null));
    await after.close();
    expect(await sandboxKeyOf(fresh.services.store)).toBeNull();
    await fresh.close();
  });

  it("says so at every start with a curl call that works, the first start and after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fd-mcp-start-"));
    // The printed call, run as curl would: its URL and body from the output, the headers it names.
    const printedCall = async (out: string) => {
      const url = /curl -s (http:\/\/\S+\/api\/mcp) /.exec(out)?.[1];
      const body = /-d '(\{"jsonrpc".*\})'/.exec(out)?.[1];
      expect(url && body, out).toBeTruthy();
      const res = await fetch(url as string, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body,
      });
      const answer = (await res.json()) as { result: CallToolResult };
      expect(answer.result.isError, JSON.stringify(answer)).toBeFalsy();
      return answer.result.structuredContent as { quote_id: string; livemode: boolean };
    };
    try {
      const first = await startChildServer({ DATA_DIR: dir });
      try {
        await first.waitFor(/Set MCP_API_KEY/, 30_000);
        const out = first.output();
        expect(out).toMatch(/Your sandbox API key \(shown once/);
        // The console's address is printed beside the key, and answers (its page, or how to build it).
        const consoleUrl = /Console: (http:\/\/127\.0\.0\.1:\d+\/console\/) /.exec(out)?.[1];
        expect(consoleUrl, out).toBeTruthy();
        const page = await fetch(consoleUrl as string);
        expect([200, 503]).toContain(page.status);
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
        // So is the API reference's, where the key can be tried.
        const docsUrl = /API reference: (http:\/\/127\.0\.0\.1:\d+\/docs) /.exec(out)?.[1];
        expect(docsUrl, out).toBeTruthy();
        expect((await fetch(docsUrl as string)).status).toBe(200);
        // And a sandbox dispatch-team key to try the board with: test mode, the dispatcher's kind.
        const dispatchKey = /sandbox dispatch-team key.*\n {2}(fsd_test_\w{36})/.exec(out)?.[1];
        expect(dispatchKey, out).toBeTruthy();
        const session = await fetch(new URL("/console/session", consoleUrl as string), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ api_key: dispatchKey }),
        });
        expect(session.status).toBe(200);
        expect(await session.json()).toMatchObject({ kind: "dispatcher", livemode: false });
        expect(out).toMatch(/run in sandbox mode\nunder the sandbox key fsd_test_\.\.\.\w{4}/);
        expect((await printedCall(out)).livemode).toBe(false);
      } finally {
        await first.kill();
      }
      // A restart prints no key (it has no plaintext to print) yet still finds and uses it.
      const again = await startChildServer({ DATA_DIR: dir });
      try {
        await again.waitFor(/Set MCP_API_KEY/, 30_000);
        expect(again.output()).not.toMatch(/fsd_test_[0-9A-Za-z]{36}/);
        expect((await printedCall(again.output())).quote_id).toMatch(/^qte_/);
      } finally {
        await again.kill();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("never takes a live key for the sandbox key, even one of the sandbox account with its label", async () => {
    const fresh = await createHarness();
    const stored = await sandboxKeyOf(fresh.services.store);
    expect(stored).not.toBeNull();
    await fresh.services.keys.revoke(stored?.id as string, "operator:test");
    await fresh.services.keys.issue({
      accountName: SANDBOX_ACCOUNT,
      mode: "live",
      label: SANDBOX_KEY_LABEL,
      actor: "operator:test",
    });
    expect(await sandboxKeyOf(fresh.services.store)).toBeNull();
    // The app, built again on this store as a restart would, serves keyed tools under no key at all.
    const restarted = await buildApp(fresh.services);
    await restarted.listen({ port: 0, host: "127.0.0.1" });
    const url = `http://127.0.0.1:${(restarted.server.address() as AddressInfo).port}/api/mcp`;
    expect(await listedNames(url)).toEqual(namesFor(null));
    const client = await connect(url);
    const refused = (await client.callTool({ name: "dispatch.quote", arguments: quote })) as CallToolResult;
    expect(JSON.parse(text(refused)).code).toBe("dispatch_not_configured");
    await client.close();
    await restarted.close();
    await fresh.close();
  });
});

describe("MCP for a caller without a key of its own (issue 28, item 19)", () => {
  it("quotes, orders and reads that order under the sandbox key, and nothing else keyed: each other tool is 401 and unlisted", async () => {
    // One call per keyed tool from one client: a burst above their number.
    const fresh = await createHarness({ AGENT_RATE_LIMIT_BURST: "500", AGENT_RATE_LIMIT_PER_MINUTE: "1000" });
    try {
      await fresh.services.store.contractors.insert(austinCrew("anon"), testRecord());
      await fresh.services.pool.load();
      const url = `${await listen(fresh)}/api/mcp`;
      const anonymous = await connect(url);
      const listed = (await anonymous.listTools()).tools.map((t) => t.name).sort();
      expect(listed).toEqual(namesOnServerKey());
      expect(listed.filter((n) => OPERATIONS.find((o) => o.name === n)?.access !== "public").sort()).toEqual([
        "dispatch.order",
        "dispatch.order_status",
        "dispatch.quote",
      ]);
      const example = (name: string) =>
        OPERATIONS.find((o) => o.name === name)?.example as Record<string, unknown>;
      const made = (await anonymous.callTool({
        name: "dispatch.order",
        arguments: example("dispatch.order"),
      })) as CallToolResult;
      expect(made.isError, text(made)).toBeFalsy();
      const order = made.structuredContent as { order_id: string; status: string };
      // The order's id is what opens its status to the agent that was given it.
      const status = (await anonymous.callTool({
        name: "dispatch.order_status",
        arguments: { order_id: order.order_id },
      })) as CallToolResult;
      expect(status.isError, text(status)).toBeFalsy();
      expect(status.structuredContent).toMatchObject({ order_id: order.order_id });

      // Every other keyed tool: the sandbox account's orders, audit records, cancellations and webhook
      // settings are not the server's to hand out.
      const attacks: Record<string, Record<string, unknown>> = {
        "dispatch.order_cancel": { order_id: order.order_id, reason: "not mine" },
        "dispatch.webhooks_set_endpoint": { url: "https://attacker.example/hook" },
        "dispatch.webhooks_rotate_secret": {},
        "audit.list": { order_id: order.order_id },
        "order.attachments": { order_id: order.order_id },
      };
      for (const op of OPERATIONS.filter((o) => o.access !== "public" && !runsOnServerKey(o))) {
        const refused = (await anonymous.callTool({
          name: op.name,
          arguments: attacks[op.name] ?? example(op.name),
        })) as CallToolResult;
        expect(refused.isError, op.name).toBe(true);
        const problem = JSON.parse(text(refused));
        expect(problem, op.name).toMatchObject({ status: 401, code: "missing_api_key" });
        expect(problem.detail).toMatch(/x-api-key/);
      }
      await anonymous.close();
      const own = { "x-api-key": fresh.sandboxKey };
      // Nothing changed: the order stands, no endpoint was set and no secret made.
      const read = await fresh.get(`/api/dispatch/v1/orders/${order.order_id}`, own);
      expect(read.json().status).not.toBe("cancelled");
      const hooks = (await fresh.get("/api/dispatch/v1/webhooks", own)).json();
      expect(hooks.secrets).toEqual([]);
      expect(JSON.stringify(hooks.endpoints)).not.toContain("attacker.example");

      // The same tools answer the account's own key, sent by the caller.
      const keyed = await connect(url, own);
      expect((await keyed.listTools()).tools.map((t) => t.name).sort()).toEqual(namesFor("key"));
      const mine = (await keyed.callTool({
        name: "audit.list",
        arguments: { order_id: order.order_id },
      })) as CallToolResult;
      expect(mine.isError, text(mine)).toBeFalsy();
      expect((mine.structuredContent as { records: unknown[] }).records.length).toBeGreaterThan(0);
      await keyed.close();
    } finally {
      await fresh.close();
    }
  }, 60_000);
});

describe("MCP JSON-RPC errors and headers", () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
    });
  const rpc = async (res: Response) =>
    (await res.json()) as { id: unknown; error?: { code: number; message: string }; result?: unknown };

  it("sends an error's plain message, which the client prefixes with its code once", async () => {
    const res = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "dispatch.nothing", arguments: {} },
      }),
    );
    const answer = await rpc(res);
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toMatch(/^Unknown tool dispatch\.nothing; tools\/list names/);
    const client = await connect(`${base}/api/mcp`);
    const error = await client.callTool({ name: "dispatch.nothing", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toBe(`MCP error -32602: ${answer.error?.message}`);
    await client.close();
  });

  it("answers -32700 only for a body that is not JSON", async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"');
    expect(res.status).toBe(400);
    expect((await rpc(res)).error?.code).toBe(-32700);
  });

  it("answers -32600 for an envelope with members of the wrong type, naming the member", async () => {
    const cases: Array<[unknown, RegExp, unknown]> = [
      [{ jsonrpc: "2.0", id: 1, method: 42 }, /"method"/, 1],
      [{ jsonrpc: "1.0", id: 2, method: "tools/list" }, /"jsonrpc"/, 2],
      [{ jsonrpc: "2.0", id: { n: 3 }, method: "tools/list" }, /"id"/, null],
      [{ jsonrpc: "2.0", id: 4, method: "tools/list", params: "all" }, /"params"/, 4],
      [{ jsonrpc: "2.0", id: 5, method: "tools/list", extra: true }, /"extra"/, 5],
      [[], /empty/, null],
      ["tools/list", /object/, null],
    ];
    for (const [body, message, id] of cases) {
      const res = await post(JSON.stringify(body));
      const answer = await rpc(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(answer.error?.code, JSON.stringify(body)).toBe(-32600);
      expect(answer.error?.message).toMatch(message);
      expect(answer.id).toEqual(id);
    }
  });

  it("answers -32602 with a readable message for tools/call params of the wrong type", async () => {
    const bad = async (params: unknown) => {
      const res = await post(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params }));
      const answer = await rpc(res);
      expect(answer.id).toBe(9);
      expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(answer.error?.message).not.toMatch(/invalid_type|"path"/); // no raw issue dump
      return answer.error?.message;
    };
    expect(await bad({ name: 7, arguments: {} })).toMatch(/params\.name: expected string/);
    expect(await bad({ name: "dispatch.index", arguments: [1, 2] })).toMatch(
      /params\.arguments: expected record/,
    );
    expect(await bad({ name: "dispatch.index", arguments: "none" })).toMatch(/params\.arguments/);
    expect(await bad({ arguments: {} })).toMatch(/params\.name/);
    // The official client sees the same code as an McpError.
    const client = await connect(`${base}/api/mcp`);
    const error = await client
      .request(
        { method: "tools/call", params: { name: "dispatch.index", arguments: [1] } } as never,
        CallToolResultSchema,
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    await client.close();
  });

  it("carries Request-Id on every answer: a tool result, a JSON-RPC error, a parse error", async () => {
    const listed = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {
      "request-id": "trace-mcp-1",
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("request-id")).toBe("trace-mcp-1");
    const called = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "dispatch.index", arguments: {} },
      }),
    );
    expect(called.headers.get("request-id")).toMatch(/^req_/);
    const compat = await fetch(`${base}/api/mcp/compat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }),
    });
    expect(compat.headers.get("request-id")).toMatch(/^req_/);
    for (const body of ["{", JSON.stringify({ jsonrpc: "2.0", id: 4, method: 4 })]) {
      expect((await post(body)).headers.get("request-id")).toMatch(/^req_/);
    }
  });
});
