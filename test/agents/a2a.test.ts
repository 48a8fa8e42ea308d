// A2A through the @a2a-js/sdk client: it resolves the agent card, then runs skills by sending a message
// with a data part { skill, input } over JSON-RPC; the 0.3 `message/send` form works too. The card marks
// the key each skill needs; a caller without a key of its own gets dispatch.quote, dispatch.order and
// dispatch.order_status under the server's key (on a fresh store with no MCP_API_KEY, the sandbox key) and
// no other keyed skill; malformed JSON-RPC is answered with the code that names the fault.

import { createHash, randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type Message, Message as MessageCodec, type SendMessageRequest } from "@a2a-js/sdk";
import { type Client, ClientFactory } from "@a2a-js/sdk/client";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_OPERATIONS as OPERATIONS } from "../../src/operations/registry.js";
import { createNotificationDispatcher } from "../../src/services/create-services.js";
import {
  AGENT_INLINE_MAX_BYTES,
  agentOutputSchema,
  runsOnServerKey,
} from "../../src/transports/agent-call.js";
import { austinCrew, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { multipart } from "../helpers/multipart.js";
import { exemplary, type Storefront, startStorefront } from "../helpers/storefronts.js";

const CONTRACT_SKILLS = [
  "agentic.readiness_probe",
  "dispatch.quote",
  "dispatch.estimate",
  "dispatch.order",
  "dispatch.evals",
  "dispatch.index",
];

let h: Harness;
let base: string;
let shop: Storefront;
let client: Client;
/** The account key this server applies on callers' behalf (MCP_API_KEY), also sent by callers as their own. */
let accountKey: string;

beforeAll(async () => {
  shop = await startStorefront(exemplary);
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
  await h.services.store.contractors.insert(austinCrew("a2a"), testRecord());
  await h.services.pool.load();
  accountKey = await h.key("a2a-account", "test");
  (h.services.config as { MCP_API_KEY?: string }).MCP_API_KEY = accountKey;
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  client = await new ClientFactory().createFromUrl(base);
});
afterAll(async () => {
  await h.close();
  await shop.close();
});

function request(data: unknown): SendMessageRequest {
  return {
    tenant: "",
    configuration: undefined,
    metadata: undefined,
    message: MessageCodec.fromJSON({
      messageId: randomUUID(),
      role: "ROLE_USER",
      parts: [{ data, mediaType: "application/json" }],
    }),
  };
}

function answer(result: unknown): { data?: Record<string, unknown>; text?: string } {
  const message = result as Message;
  const part = message.parts?.[0]?.content;
  if (part?.$case === "data") return { data: part.value as Record<string, unknown> };
  if (part?.$case === "text") return { text: part.value };
  return {};
}

describe("A2A", () => {
  it("publishes a v1.0 agent card with the JSON-RPC interface and every skill, its input, examples and access", async () => {
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as {
      supportedInterfaces: Array<{ url: string; protocolBinding: string; protocolVersion: string }>;
      skills: Array<{
        id: string;
        description: string;
        examples: string[];
        tags: string[];
        securityRequirements?: unknown[];
      }>;
      capabilities: unknown;
      defaultInputModes: string[];
    };
    expect(card.supportedInterfaces[0]).toEqual({
      url: `${base}/api/a2a`,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    });
    const ids = card.skills.map((s) => s.id);
    for (const skill of CONTRACT_SKILLS) expect(ids).toContain(skill);
    expect(ids.sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    for (const skill of card.skills) {
      const op = OPERATIONS.find((o) => o.name === skill.id);
      expect(skill.description).toMatch(
        op?.access === "public" ? /Public: no key needed/ : /Needs an API key/,
      );
      expect(skill.description).toMatch(/Input/);
      expect(skill.tags).toContain(op?.access === "public" ? "public" : "needs-key");
      const kind = {
        public: null,
        key: "account-key",
        contractor: "contractor-key",
        dispatcher: "dispatcher-key",
        any_key: "any-key",
      }[op?.access ?? "public"];
      if (kind) expect(skill.tags).toContain(kind);
      // The server's own key stands in for quote, order and order status only (tag server-key); every other
      // keyed skill says, as a security requirement, that the caller must bring its own key of that role.
      const onServerKey = op !== undefined && runsOnServerKey(op);
      expect(skill.tags.includes("server-key"), skill.id).toBe(onServerKey);
      expect(skill.securityRequirements ?? [], skill.id).toEqual(
        kind === null || onServerKey
          ? []
          : [
              {
                schemes: {
                  apiKey: {
                    list:
                      kind === "any-key"
                        ? ["account", "contractor", "dispatcher"]
                        : [kind.replace(/-key$/, "")],
                  },
                },
              },
            ],
      );
      const example = JSON.parse(skill.examples[0] ?? "{}");
      expect(example.skill).toBe(skill.id);
      expect(op?.input.safeParse(example.input).success).toBe(true);
    }
  });

  it("runs every skill (the contract's six first) and answers a data part with its result", async () => {
    const done = new Set<string>();
    // An account's skills under its own key by default; null: none (the server's key, where it may).
    const run = async (skill: string, input: unknown, key: string | null = accountKey) => {
      const op = OPERATIONS.find((o) => o.name === skill);
      const options = key ? { serviceParameters: { "x-api-key": key } } : undefined;
      const res = answer(await client.sendMessage(request({ skill, input }), options));
      expect(res.text, skill).toBeUndefined();
      const parsed = op && agentOutputSchema(op).safeParse(res.data);
      expect(parsed?.success, `${skill}: ${JSON.stringify(parsed?.error?.issues)}`).toBe(true);
      done.add(skill);
      return res.data as Record<string, unknown>;
    };
    const example = (name: string) => OPERATIONS.find((o) => o.name === name)?.example;
    for (const skill of CONTRACT_SKILLS) {
      await run(
        skill,
        skill === "agentic.readiness_probe" ? { url: `${shop.origin}/` } : example(skill),
        null,
      );
    }
    const order = await run("dispatch.order", example("dispatch.order"));
    const second = await run("dispatch.order", example("dispatch.order"));
    // A photo of the problem, added by the account over REST (agents do not upload), and a document too
    // large to travel in an answer (over AGENT_INLINE_MAX_BYTES): downloaded below.
    const addFile = async (value: Buffer, filename: string, type: string) => {
      const form = multipart([{ name: "file", value, filename, type }]);
      const added = await h.app.inject({
        method: "POST",
        url: `/api/orders/${order.order_id}/attachments`,
        headers: { "content-type": form.type, "x-api-key": accountKey },
        payload: form.body,
      });
      expect(added.statusCode, added.body).toBe(200);
      return (added.json() as { attachment_id: string }).attachment_id;
    };
    const photo = await addFile(
      await sharp({ create: { width: 64, height: 48, channels: 3, background: "#36e" } })
        .jpeg()
        .toBuffer(),
      "leak.jpg",
      "image/jpeg",
    );
    const bigPdf = Buffer.concat([
      Buffer.from(
        "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n",
      ),
      Buffer.from(`%${"x".repeat(AGENT_INLINE_MAX_BYTES)}\n`),
      Buffer.from("trailer<</Root 1 0 R>>\n%%EOF\n"),
    ]);
    const manual = await addFile(bigPdf, "manual.pdf", "application/pdf");
    await h.services.audit.sequence(true);
    const size = (await run("attest.checkpoint", {})).tree_size as number;
    // Contractor skills run under the contractor's own key, sent by the caller of the skill.
    const keyFor = async (orderId: unknown) => {
      const [row] = await h.services.store.orders.byIds([orderId as string]);
      return (
        await h.services.keys.issue({
          accountName: "crew",
          mode: "test",
          actor: "operator:test",
          kind: "contractor",
          contractorId: row?.contractor_id as string,
        })
      ).key;
    };
    const offerOf = async (key: string, orderId: unknown) =>
      (
        (await run("contractor.offers", {}, key)).offers as Array<{ offer_id: string; order_id: string }>
      ).find((o) => o.order_id === orderId)?.offer_id;
    // The account's checklist for its plumbing jobs: one required item, answered below before completion.
    const checklist = {
      trade: "plumbing",
      name: "Agent's checklist",
      items: [{ kind: "yes_no", label: "Water shut off", required: true }],
    };
    const template = await run("checklist.template_create", checklist);
    const mine = await keyFor(order.order_id);
    await run("contractor.accept_offer", { offer_id: await offerOf(mine, order.order_id) }, mine);
    await run("contractor.jobs", {}, mine);
    await run(
      "contractor.report_status",
      { order_id: order.order_id, status: "en_route", eta_minutes: 9 },
      mine,
    );
    const nte = await run(
      "contractor.request_nte",
      { order_id: order.order_id, requested_nte_cents: 60_000, reason: "more work" },
      mine,
    );
    await run("dispatch.nte_decision", {
      order_id: order.order_id,
      request_id: nte.request_id,
      decision: "approve",
    });
    await run("contractor.report_status", { order_id: order.order_id, status: "on_site" }, mine);
    // The job's checklist: the sandbox's starter plumbing checklist (one required yes/no), then the
    // account's own; every required item answered before completion.
    const job = await run("order.checklist", { order_id: order.order_id }, mine);
    const required = (job.items as Array<{ item_id: string; label: string; required: boolean }>).filter(
      (i) => i.required,
    );
    expect(required.map((i) => i.label)).toEqual(["Leak stopped", "Water shut off"]);
    const answered = await run(
      "contractor.checklist_answer",
      { order_id: order.order_id, answers: required.map((i) => ({ item_id: i.item_id, value: true })) },
      mine,
    );
    expect(answered.unanswered_required).toEqual([]);
    await run(
      "contractor.report_status",
      { order_id: order.order_id, status: "completed", final_cost_cents: 51_000 },
      mine,
    );
    await run(
      "contractor.invoice",
      { order_id: order.order_id, lines: [{ kind: "trip_charge", amount_cents: 51_000 }] },
      mine,
    );
    await run(
      "contractor.invoice_revise",
      {
        order_id: order.order_id,
        lines: [{ kind: "trip_charge", amount_cents: 50_000 }],
        amount_cents: 50_000,
      },
      mine,
    );
    expect((await run("order.invoice", { order_id: order.order_id })).total_cents).toBe(50_000);
    expect(
      (await run("dispatch.invoice_decision", { order_id: order.order_id, decision: "approve", version: 2 }))
        .status,
    ).toBe("approved");
    const paidOn = new Date().toISOString().slice(0, 10);
    expect(
      (
        await run("dispatch.invoice_paid", {
          order_id: order.order_id,
          payment_reference: "ACH-1",
          paid_on: paidOn,
        })
      ).status,
    ).toBe("paid");
    const [ownKey] = (await run("dispatch.keys", {})).keys as Array<{ id: string }>;
    await run("dispatch.key_role_set", { key_id: ownKey?.id, role: "admin" });
    // Sites and assets: a site, an asset at it, an order naming both (its location from the site), the
    // asset's history, then both archived.
    const site = await run(
      "dispatch.site_create",
      example("dispatch.site_create") as Record<string, unknown>,
    );
    await run("dispatch.site_update", { site_id: site.site_id, hours: "mon-sun 06:00-22:00" });
    await run("dispatch.site_import", example("dispatch.site_import") as Record<string, unknown>);
    await run("dispatch.sites", { state: "TX" });
    const asset = await run("dispatch.asset_create", {
      ...(example("dispatch.asset_create") as Record<string, unknown>),
      site_id: site.site_id,
    });
    await run("dispatch.asset_update", { asset_id: asset.asset_id, tags: ["roof"] });
    await run("dispatch.assets", { site_id: site.site_id });
    const { location: _location, ...siteJob } = example("dispatch.order") as Record<string, unknown>;
    const sited = await run("dispatch.order", {
      ...siteJob,
      site_id: site.site_id,
      asset_ids: [asset.asset_id],
    });
    expect((sited.site as { site_id: string }).site_id).toBe(site.site_id);
    const history = await run("dispatch.asset_history", { asset_id: asset.asset_id });
    expect((history.orders as Array<{ order_id: string }>).map((o) => o.order_id)).toEqual([sited.order_id]);
    await run("dispatch.site", { site_id: site.site_id });
    // A maintenance plan at the site: created, changed, listed, read; its next occurrence becomes its
    // order now (moved to its own window), the one after is skipped.
    const pm = await run("dispatch.plan_create", {
      ...(OPERATIONS.find((o) => o.name === "dispatch.plan_create")?.example as Record<string, unknown>),
      site_id: site.site_id,
      recurrence: "FREQ=WEEKLY",
      window: { days: ["mon", "tue", "wed", "thu", "fri", "sat"], start: "08:00", end: "20:00" },
    });
    await run("dispatch.plan_update", { plan_id: pm.plan_id, name: "Weekly filter check" });
    await run("dispatch.plans", { site_id: site.site_id });
    const upcoming = (await run("dispatch.plan", { plan_id: pm.plan_id })).occurrences as Array<{
      occurrence_key: string;
      window: { start: string; end: string };
    }>;
    const [next, after] = upcoming;
    const moved = await run("dispatch.occurrence_move", {
      plan_id: pm.plan_id,
      occurrence_key: next?.occurrence_key,
      service_window: next?.window,
      reason: "booked now by the agent",
    });
    expect(moved.order_id).toMatch(/^ord_/);
    await run("dispatch.occurrence_skip", {
      plan_id: pm.plan_id,
      occurrence_key: after?.occurrence_key,
      reason: "store closed",
    });
    await run("dispatch.occurrences", { site_id: site.site_id });
    await run("dispatch.plan_archive", { plan_id: pm.plan_id });
    await run("dispatch.maintenance_compliance", { period: "rolling_90d" });
    // The site's request link, and requests: the agent reports one, reads and lists them, the policy
    // set and read; one approved (an order), one rejected; the link rotated.
    const requestLink = await run("dispatch.request_link", { site_id: site.site_id });
    expect(requestLink.url).toMatch(/\/r\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    await run("dispatch.request_policy_set", { mode: "hold" });
    expect((await run("dispatch.request_policy", {})).mode).toBe("hold");
    const report = { site_id: site.site_id, name: "Dana", contact: "+1-512-555-0142" };
    const leak = await run("dispatch.request_create", {
      ...report,
      description: "Toilet clogged and leaking",
    });
    expect(leak).toMatchObject({ status: "pending", trade_guess: { trade: "plumbing" } });
    await run("dispatch.request", { request_id: leak.request_id });
    await run("dispatch.requests", { status: "pending" });
    // An open plumbing order at the site already (above): the request is linked to it, not doubled.
    const linked = await run("dispatch.request_approve", { request_id: leak.request_id });
    expect(linked.status).toBe("linked");
    expect(linked.order_id).toMatch(/^ord_/);
    const vague = await run("dispatch.request_create", { ...report, description: "Something odd" });
    expect(
      (await run("dispatch.request_reject", { request_id: vague.request_id, reason: "no detail" })).status,
    ).toBe("rejected");
    await run("dispatch.request_link_rotate", { site_id: site.site_id, reason: "by the agent" });
    await run("dispatch.asset_archive", { asset_id: asset.asset_id });
    await run("dispatch.site_archive", { site_id: site.site_id });
    // The order's tracking link: issued, listed, revoked (its page then answers 404).
    const link = await run("dispatch.tracking_link", { order_id: order.order_id });
    expect(link.url).toMatch(/\/t\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    await run("dispatch.tracking_links", { order_id: order.order_id });
    expect(
      (await run("dispatch.tracking_link_revoke", { order_id: order.order_id, reason: "by the agent" }))
        .state,
    ).toBe("revoked");
    // Notifications: the order at the site cancelled (its contact hears of it); with no SMTP server the
    // worker keeps the message. The agent lists, reads and resends it, and sets who receives them.
    await run("dispatch.order_cancel", { order_id: sited.order_id });
    await createNotificationDispatcher(h.services).tick();
    const notified = (await run("dispatch.notifications", { order_id: sited.order_id }))
      .notifications as Array<{
      notification_id: string;
    }>;
    expect(notified[0]).toMatchObject({ event: "cancelled", status: "kept" });
    await run("dispatch.notification", { notification_id: notified[0]?.notification_id });
    await run("dispatch.notification_resend", { notification_id: notified[0]?.notification_id });
    await run("dispatch.notification_subscribers_set", example("dispatch.notification_subscribers_set"));
    await run("dispatch.notification_subscribers", {});
    await run("dispatch.notification_opt_out", example("dispatch.notification_opt_out"));
    const rated = await run("dispatch.order_rate", {
      order_id: order.order_id,
      quality: 4,
      timeliness: 4,
      communication: 4,
      value: 4,
    });
    expect(rated).toMatchObject({ overall: 4, comment: null });
    expect((await run("order.rating", { order_id: order.order_id })).value).toBe(4);
    expect((await run("contractor.ratings", {}, mine)).count).toBeGreaterThan(0);
    const off = await run("contractor.time_off_add", example("contractor.time_off_add"), mine);
    await run("contractor.time_off", {}, mine);
    await run("contractor.time_off_remove", { time_off_id: off.time_off_id }, mine);
    await run("contractor.audit", { order_id: order.order_id }, mine);
    const theirs = await keyFor(second.order_id);
    await run("contractor.decline_offer", { offer_id: await offerOf(theirs, second.order_id) }, theirs);
    // Counter-offers: the account's agent accepts one contractor's counter and declines another's.
    for (const answer of ["dispatch.counter_accept", "dispatch.counter_decline"]) {
      const job = await run("dispatch.order", example("dispatch.order"));
      const asker = await keyFor(job.order_id);
      const made = await run(
        "contractor.counter_offer",
        {
          offer_id: await offerOf(asker, job.order_id),
          price_cents: (job.estimated_cost_cents as number) + 2_500,
        },
        asker,
      );
      expect(made.counter).toMatchObject({ status: "pending" });
      const answered = await run(answer, { order_id: job.order_id });
      expect(answered).toMatchObject({
        status: answer === "dispatch.counter_accept" ? "accepted" : "offered",
        counter: { status: answer === "dispatch.counter_accept" ? "accepted" : "declined" },
      });
    }
    const ops = await h.dispatcherKey("test");
    const [held] = await h.services.store.orders.byIds([order.order_id as string]);
    await run("dispatcher.orders", { limit: 5 }, ops);
    await run("dispatcher.order", { order_id: order.order_id }, ops);
    await run(
      "dispatcher.assign",
      { order_id: second.order_id, contractor_id: held?.contractor_id, reason: "named" },
      ops,
    );
    await run(
      "dispatcher.pool",
      { contractor_id: held?.contractor_id, action: "include", reason: "checked" },
      ops,
    );
    const found = await run("dispatcher.contractors", example("dispatcher.contractors"), ops);
    expect((found.contractors as unknown[]).length).toBeGreaterThan(0);
    await run("dispatcher.contractor", { contractor_id: held?.contractor_id }, ops);
    const teamSites = (await run("dispatcher.sites", {}, ops)).sites as Array<{ site_id: string }>;
    await run("dispatcher.site", { site_id: teamSites[0]?.site_id }, ops);
    await run("dispatcher.audit", { order_id: order.order_id }, ops);
    const today = new Date().toISOString().slice(0, 10);
    const proposal = await run("dispatch.schedule_optimize", { date: today, time_limit_ms: 100 }, ops);
    await run("dispatch.schedule_apply", { proposal_id: proposal.proposal_id }, ops);
    const lanes = await run("dispatch.schedule_lanes", { date: today, sort: "load", limit: 5 }, ops);
    expect(typeof lanes.total).toBe("number");
    const set = { ...(example("dispatcher.time_off_add") as object), contractor_id: held?.contractor_id };
    const theirOff = await run("dispatcher.time_off_add", set, ops);
    await run("dispatcher.time_off", { contractor_id: held?.contractor_id }, ops);
    await run("dispatcher.time_off_remove", { time_off_id: theirOff.time_off_id, reason: "back" }, ops);
    // A scheduled order's window moved a week on (the same local hours), by the dispatch team.
    const scheduled = await run("dispatch.order", {
      ...(example("dispatch.order") as object),
      urgency: "scheduled",
    });
    const booked = scheduled.arrival_window as { start: string; end: string };
    const week = (iso: string) => new Date(Date.parse(iso) + 7 * 86_400_000).toISOString();
    await run(
      "dispatcher.reschedule",
      {
        order_id: scheduled.order_id,
        service_window: { start: week(booked.start), end: week(booked.end) },
        reason: "the store is closed that day",
      },
      ops,
    );
    await run("dispatcher.cancel", { order_id: scheduled.order_id, reason: "done with it" }, ops);
    const third = await run("dispatch.order", example("dispatch.order"));
    await run("dispatcher.cancel", { order_id: third.order_id, reason: "duplicate" }, ops);
    await run("dispatch.order_cancel", { order_id: second.order_id });
    expect((await run("dispatch.webhooks_rotate_secret", {})).secret).toMatch(/^whsec_/);
    await run("dispatch.webhooks_set_endpoint", { url: "https://hooks.example.com/dispatch" });
    // An order placed with the endpoint set: its event has a recipient, so it is written.
    await run("dispatch.order", example("dispatch.order"));
    await h.services.store.webhooks.fanOut(1000, new Date().toISOString());
    const hooks = (await run("dispatch.webhooks_deliveries", { limit: 5 })).deliveries as Array<{
      delivery_id: string;
      endpoint_id: string;
    }>;
    expect(hooks.length).toBeGreaterThan(0);
    await run("dispatch.webhooks_redeliver", { delivery_id: hooks[0]?.delivery_id });
    await run("dispatch.webhooks_enable_endpoint", { endpoint_id: hooks[0]?.endpoint_id });
    // The account's do-not-dispatch list: the contractor of its first order, named by the handle the order
    // shows, excluded, listed (by the account and by the dispatch team), then taken off again.
    const excluded = await run("dispatch.do_not_dispatch_add", {
      contractor_ref: order.contractor_ref,
      reason: "left the site unsafe",
    });
    await run("dispatch.do_not_dispatch", {});
    await run("dispatcher.do_not_dispatch", {}, ops);
    await run("dispatch.do_not_dispatch_remove", { entry_id: excluded.entry_id, reason: "trying again" });
    const inputs: Record<string, unknown> = {
      "dispatch.order_status": { order_id: order.order_id },
      "attest.verify": { seal: order.seal },
      "attest.checkpoint_at": { tree_size: size },
      "attest.consistency": { first: 1, second: size },
      "audit.list": { order_id: order.order_id },
      "order.attachments": { order_id: order.order_id },
      "order.checklist": { order_id: order.order_id },
      "checklist.template_retire": { template_id: template.template_id },
    };
    // Downloads: a data part with the descriptor and the URL REST serves the bytes at, and a file part:
    // the bytes themselves (their digest the descriptor's), or for a file too large, its URL.
    const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    for (const [skill, input, type, inline] of [
      ["order.attachment_content", { order_id: order.order_id, attachment_id: photo }, "image/jpeg", true],
      ["order.attachment_thumbnail", { order_id: order.order_id, attachment_id: photo }, "image/webp", true],
      ["order.report", { order_id: order.order_id }, "application/pdf", true],
      [
        "order.attachment_content",
        { order_id: order.order_id, attachment_id: manual },
        "application/pdf",
        false,
      ],
    ] as const) {
      const file = (await run(skill, input)) as { sha256: string; url: string; size: number };
      expect(file, skill).toMatchObject({ media_type: type, inline });
      const message = (await client.sendMessage(request({ skill, input }), {
        serviceParameters: { "x-api-key": accountKey },
      })) as Message;
      const part = message.parts[1];
      expect(part?.mediaType, skill).toBe(type);
      if (inline) {
        if (part?.content?.$case !== "raw") throw new Error(`${skill}: no bytes`);
        expect(sha(part.content.value), skill).toBe(file.sha256);
      } else {
        expect(part?.content, skill).toEqual({ $case: "url", value: file.url });
        const rest = await fetch(file.url, { headers: { "x-api-key": accountKey } });
        expect(sha(new Uint8Array(await rest.arrayBuffer())), skill).toBe(file.sha256);
        expect(file.size).toBe(bigPdf.length);
      }
    }
    for (const op of OPERATIONS) if (!done.has(op.name)) await run(op.name, inputs[op.name] ?? op.example);
    expect([...done].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
  });

  it("answers a text part with a clear error for a bad input, an unknown skill or no data part", async () => {
    const bad = answer(
      await client.sendMessage(request({ skill: "dispatch.quote", input: { trade: "plumbing" } })),
    );
    expect(bad.text).toMatch(/validation_failed \(422\).*location/);
    const unknown = answer(await client.sendMessage(request({ skill: "dispatch.teleport", input: {} })));
    expect(unknown.text).toMatch(/Unknown skill dispatch\.teleport/);
    const noData = answer(await client.sendMessage(request("just text?")));
    expect(noData.text).toMatch(/Send a data part/);
  });

  it("accepts the 0.3 message/send form and answers in 0.3 shape", async () => {
    const res = await fetch(`${base}/api/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "message/send",
        params: {
          message: {
            kind: "message",
            messageId: randomUUID(),
            role: "user",
            parts: [{ kind: "data", data: { skill: "dispatch.evals", input: { period: "rolling_7d" } } }],
          },
        },
      }),
    });
    const body = (await res.json()) as {
      result: { kind: string; parts: Array<{ kind: string; data: { period: string } }> };
    };
    expect(body.result.kind).toBe("message");
    expect(body.result.parts[0]?.kind).toBe("data");
    expect(body.result.parts[0]?.data.period).toBe("rolling_7d");
  });
});

describe("A2A keys", () => {
  it("without a server-side key, runs keyed skills under the caller's own x-api-key, else says why not", async () => {
    const open = await createHarness({ MCP_USE_SANDBOX_KEY: "false" });
    await open.app.listen({ port: 0, host: "127.0.0.1" });
    const openBase = `http://127.0.0.1:${(open.app.server.address() as AddressInfo).port}`;
    const quote = { skill: "dispatch.quote", input: { trade: "plumbing", location: { state: "TX" } } };
    const anonymous = await new ClientFactory().createFromUrl(openBase);
    expect(answer(await anonymous.sendMessage(request(quote))).text).toMatch(/dispatch_not_configured/);
    const key = await open.key("own-key", "test");
    const own = answer(
      await anonymous.sendMessage(request(quote), { serviceParameters: { "x-api-key": key } }),
    );
    expect(own.data?.quote_id).toMatch(/^qte_/);
    const wrong = answer(
      await anonymous.sendMessage(request(quote), { serviceParameters: { "x-api-key": "fsd_test_nope" } }),
    );
    expect(wrong.text).toMatch(/invalid_api_key \(401\)/);
    await open.close();
  });
});

describe("A2A on a fresh store, with no MCP_API_KEY", () => {
  it("runs keyed skills under the first-start sandbox key, in test mode; a caller's own key still wins", async () => {
    const fresh = await createHarness();
    await fresh.app.listen({ port: 0, host: "127.0.0.1" });
    const freshBase = `http://127.0.0.1:${(fresh.app.server.address() as AddressInfo).port}`;
    const agent = await new ClientFactory().createFromUrl(freshBase);
    const quote = {
      skill: "dispatch.quote",
      input: { trade: "hvac", location: { state: "CA", zip: "94103" } },
    };
    const made = answer(await agent.sendMessage(request(quote)));
    expect(made.text).toBeUndefined();
    expect(made.data?.livemode).toBe(false);
    const audit = await fresh.get("/api/audit?kind=quote.issued", { "x-api-key": fresh.sandboxKey });
    expect(audit.body).toContain(made.data?.quote_id as string);
    const live = await fresh.key("own-live", "live");
    const own = answer(await agent.sendMessage(request(quote), { serviceParameters: { "x-api-key": live } }));
    expect(own.data?.livemode).toBe(true);
    await fresh.close();
  });
});

describe("A2A for a caller without a key of its own (issue 28, item 19)", () => {
  it("orders and reads that order under the sandbox key, and refuses every other keyed skill with 401", async () => {
    // One call per keyed skill from one client: a burst above their number.
    const fresh = await createHarness({ AGENT_RATE_LIMIT_BURST: "500", AGENT_RATE_LIMIT_PER_MINUTE: "1000" });
    try {
      await fresh.services.store.contractors.insert(austinCrew("a2a-anon"), testRecord());
      await fresh.services.pool.load();
      await fresh.app.listen({ port: 0, host: "127.0.0.1" });
      const freshBase = `http://127.0.0.1:${(fresh.app.server.address() as AddressInfo).port}`;
      const agent = await new ClientFactory().createFromUrl(freshBase);
      const send = async (skill: string, input: unknown, key?: string) =>
        answer(
          await agent.sendMessage(
            request({ skill, input }),
            key ? { serviceParameters: { "x-api-key": key } } : undefined,
          ),
        );
      const example = (name: string) => OPERATIONS.find((o) => o.name === name)?.example;
      const order = await send("dispatch.order", example("dispatch.order"));
      expect(order.text).toBeUndefined();
      const orderId = order.data?.order_id as string;
      const status = await send("dispatch.order_status", { order_id: orderId });
      expect(status.text).toBeUndefined();
      expect(status.data?.order_id).toBe(orderId);
      const attacks: Record<string, unknown> = {
        "dispatch.order_cancel": { order_id: orderId, reason: "not mine" },
        "dispatch.webhooks_set_endpoint": { url: "https://attacker.example/hook" },
        "dispatch.webhooks_rotate_secret": {},
        "audit.list": { order_id: orderId },
        "order.attachments": { order_id: orderId },
      };
      for (const op of OPERATIONS.filter((o) => o.access !== "public" && !runsOnServerKey(o))) {
        const refused = await send(op.name, attacks[op.name] ?? op.example);
        expect(refused.data, op.name).toBeUndefined();
        expect(refused.text, op.name).toMatch(/missing_api_key \(401\).*x-api-key/);
      }
      const own = { "x-api-key": fresh.sandboxKey };
      expect((await fresh.get(`/api/dispatch/v1/orders/${orderId}`, own)).json().status).not.toBe(
        "cancelled",
      );
      expect((await fresh.get("/api/dispatch/v1/webhooks", own)).json().secrets).toEqual([]);
      // The caller's own key opens them.
      const mine = await send("audit.list", { order_id: orderId }, fresh.sandboxKey);
      expect(mine.text).toBeUndefined();
      expect((mine.data?.records as unknown[] | undefined)?.length ?? 0).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  }, 60_000);
});

describe("A2A JSON-RPC errors and headers", () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
  const rpc = async (res: Response) =>
    (await res.json()) as { id: unknown; error?: { code: number; message: string } };

  it("answers -32700 only for a body that is not JSON, and -32600 for a malformed envelope", async () => {
    const parse = await post("{ not json");
    expect(parse.status).toBe(400);
    expect((await rpc(parse)).error?.code).toBe(-32700);
    const cases: Array<[unknown, RegExp, unknown]> = [
      [{ jsonrpc: "2.0", id: 1, method: 42, params: {} }, /"method"/, 1],
      [{ jsonrpc: "1.0", id: 2, method: "SendMessage", params: {} }, /"jsonrpc"/, 2],
      [{ jsonrpc: "2.0", id: { n: 3 }, method: "SendMessage", params: {} }, /"id"/, null],
      [{ jsonrpc: "2.0", id: 4, method: "SendMessage", params: "hello" }, /"params"/, 4],
      [[{ jsonrpc: "2.0", id: 5, method: "SendMessage", params: {} }], /batch/, null],
    ];
    for (const [body, message, id] of cases) {
      const res = await post(JSON.stringify(body));
      const answer = await rpc(res);
      expect(answer.error?.code, JSON.stringify(body)).toBe(-32600);
      expect(answer.error?.message).toMatch(message);
      expect(answer.id).toEqual(id);
    }
    // Params of the wrong shape for a well-formed request stay -32602, with the SDK's message.
    const params = await rpc(
      await post(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "SendMessage", params: { message: 5 } })),
    );
    expect(params.error?.code).toBe(-32602);
    expect(params.id).toBe(6);
  });

  it("carries Request-Id on every answer", async () => {
    const ok = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: {
          message: {
            messageId: randomUUID(),
            role: "ROLE_USER",
            parts: [{ data: { skill: "dispatch.index", input: {} }, mediaType: "application/json" }],
          },
        },
      }),
      { "request-id": "trace-a2a-1" },
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get("request-id")).toBe("trace-a2a-1");
    for (const body of ["{", JSON.stringify({ jsonrpc: "2.0", id: 2, method: 2 })]) {
      expect((await post(body)).headers.get("request-id")).toMatch(/^req_/);
    }
  });
});
