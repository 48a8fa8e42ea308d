// Checklists over HTTP (issue 32): templates (the service's by the dispatch team, an account's own), an
// order's checklist fixed once, answers while on site each sealed in the order's audit log, a replayed
// queue accepted, and completion refused while a required item is unanswered. Every limit and refusal a
// problem that stores and seals nothing. On SQLite, and on PostgreSQL in the postgres project.

import type { LightMyRequestResponse } from "fastify";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const TEMPLATES = "/api/checklist-templates";
const ANSWER = "/api/contractor/v1/jobs/checklist";
const STATUS = "/api/contractor/v1/jobs/status";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak",
};

let h: Harness;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let holderKey: string;
let otherContractorKey: string;

const as = (key: string) => ({ "x-api-key": key });

const newJob = () => acceptedJob(h, caller, holderKey, JOB);

async function onSite(orderId: string): Promise<void> {
  const moved = await h.post(
    STATUS,
    { order_id: orderId, status: "en_route", eta_minutes: 10 },
    as(holderKey),
  );
  expect(moved.statusCode, moved.body).toBe(200);
  const there = await h.post(STATUS, { order_id: orderId, status: "on_site" }, as(holderKey));
  expect(there.statusCode, there.body).toBe(200);
}

const complete = (orderId: string) =>
  h.post(STATUS, { order_id: orderId, status: "completed", final_cost_cents: 12_000 }, as(holderKey));

const checklist = (key: string, orderId: string) => h.get(`/api/orders/${orderId}/checklist`, as(key));

const answer = (orderId: string, answers: unknown[], key = holderKey) =>
  h.post(ANSWER, { order_id: orderId, answers }, as(key));

async function answerRecords(orderId: string, key = caller, path = "/api/audit") {
  // The contractor's listing takes the order alone.
  const query = path.startsWith("/api/contractor/") ? "" : "&limit=200";
  const res = await h.get(`${path}?order_id=${orderId}${query}`, as(key));
  expect(res.statusCode, res.body).toBe(200);
  const all = res.json().records as Array<{ kind: string; seal: string; disclosed: Record<string, unknown> }>;
  return all.filter((r) => r.kind === "order.checklist_answered");
}

async function uploadPhoto(orderId: string): Promise<string> {
  const jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#39c" } })
    .jpeg()
    .toBuffer();
  const boundary = "----checklist";
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="joint.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    jpeg,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await h.app.inject({
    method: "POST",
    url: `/api/orders/${orderId}/attachments`,
    headers: { ...as(holderKey), "content-type": `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().attachment_id as string;
}

interface Item {
  item_id: string;
  label: string;
  kind: string;
  template_id: string;
  answer: { value: unknown; record: { seal: string } } | null;
}

let service: { template_id: string; items: Item[] };
let own: { template_id: string; items: Item[] };
const itemOf = (t: { items: Item[] }, label: string) => t.items.find((i) => i.label === label) as Item;

beforeAll(async () => {
  h = await createHarness();
  ({ caller, otherAccount, dispatcher, holderKey, otherContractorKey } = await crewOf(h, {
    maxActiveJobs: 20,
  }));
  const svc = await h.post(
    TEMPLATES,
    {
      trade: "plumbing",
      name: "Plumbing repair",
      items: [
        { kind: "yes_no", label: "Water shut off", required: true },
        { kind: "number", label: "Line pressure", unit: "psi", min: 20, max: 80, required: true },
        { kind: "photo", label: "Repaired joint", required: true },
        { kind: "text", label: "Notes", max_length: 10 },
      ],
    },
    as(dispatcher),
  );
  expect(svc.statusCode, svc.body).toBe(200);
  service = svc.json();
  const mine = await h.post(
    TEMPLATES,
    {
      trade: "plumbing",
      name: "Acme walkthrough",
      items: [{ kind: "yes_no", label: "Walkthrough", required: true }],
    },
    as(caller),
  );
  expect(mine.statusCode, mine.body).toBe(200);
  own = mine.json();
});

afterAll(async () => h.close());

describe("templates", () => {
  it("are the service's when the dispatch team creates them, the account's own when the account does", () => {
    expect(service).toMatchObject({
      scope: "service",
      account_id: null,
      trade: "plumbing",
      retired_at: null,
    });
    expect(itemOf(service, "Line pressure")).toMatchObject({
      kind: "number",
      unit: "psi",
      min: 20,
      max: 80,
      required: true,
    });
    expect(itemOf(service, "Notes")).toMatchObject({ kind: "text", max_length: 10, required: false });
    for (const item of service.items) expect(item.item_id).toMatch(/^cli_/);
    expect(own).toMatchObject({ scope: "account", trade: "plumbing", replaces_service: false });
  });

  it("are refused to a contractor key (403)", async () => {
    const res = await h.post(
      TEMPLATES,
      { trade: "plumbing", name: "x", items: [{ kind: "photo", label: "x" }] },
      as(holderKey),
    );
    expectProblem(res, 403, "key_kind_not_allowed");
    expectProblem(await h.get(TEMPLATES, as(holderKey)), 403, "key_kind_not_allowed");
  });

  it("refuse each limit with 422 naming its field, and store nothing", async () => {
    const before = (await h.get(`${TEMPLATES}?status=all`, as(caller))).json().templates.length;
    const yes = (label = "ok") => ({ kind: "yes_no", label });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ items: Array.from({ length: 51 }, () => yes()) }, "items"],
      [{ items: [] }, "items"],
      [{ items: [yes("x".repeat(201))] }, "items.0.label"],
      [{ items: [yes("  ")] }, "items.0.label"],
      [{ items: [{ kind: "number", label: "p", min: 5, max: 1 }] }, "items.0.max"],
      [{ items: [{ kind: "number", label: "p", unit: "u".repeat(21) }] }, "items.0.unit"],
      [{ items: [{ kind: "yes_no", label: "p", unit: "psi" }] }, "items.0"],
      [{ items: [{ kind: "text", label: "p", max_length: 2001 }] }, "items.0.max_length"],
      [{ items: [{ kind: "signature", label: "p" }] }, "items.0.kind"],
      [{ name: "n".repeat(101), items: [yes()] }, "name"],
      [{ trade: "juggling", items: [yes()] }, "trade"],
    ];
    for (const [over, field] of cases) {
      const res = await h.post(TEMPLATES, { trade: "plumbing", name: "t", ...over }, as(caller));
      const body = expectProblem(res, 422, "validation_failed");
      const fields = body.errors.map((e: { field: string }) => e.field);
      expect(
        fields.some((f: string) => f.startsWith(field)),
        `${field} in ${JSON.stringify(body.errors)}`,
      ).toBe(true);
    }
    const replacing = await h.post(
      TEMPLATES,
      { trade: "plumbing", name: "t", replaces_service: true, items: [yes()] },
      as(dispatcher),
    );
    expect(expectProblem(replacing, 422, "validation_failed").errors[0].field).toBe("replaces_service");
    expect((await h.get(`${TEMPLATES}?status=all`, as(caller))).json().templates.length).toBe(before);
  });

  it("are at most 10 in force per trade and scope: the 11th is refused until one is retired", async () => {
    const key = await h.key("busy", "live");
    const make = () =>
      h.post(TEMPLATES, { trade: "hvac", name: "t", items: [{ kind: "yes_no", label: "ok" }] }, as(key));
    const made: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await make();
      expect(res.statusCode, res.body).toBe(200);
      made.push(res.json().template_id);
    }
    const refused = expectProblem(await make(), 422, "validation_failed");
    expect(refused.errors[0]).toMatchObject({ field: "trade" });
    expect(refused.errors[0].message).toMatch(/at most 10 templates/);
    const retired = await h.post(`${TEMPLATES}/${made[0]}/retire`, {}, as(key));
    expect(retired.statusCode, retired.body).toBe(200);
    expect((await make()).statusCode).toBe(200);
  });

  it("are listed to their owner: an account its own (the service's with scope=service), the dispatch team all", async () => {
    const ids = (res: LightMyRequestResponse) =>
      res.json().templates.map((t: { template_id: string }) => t.template_id);
    const mine = ids(await h.get(`${TEMPLATES}?trade=plumbing`, as(caller)));
    expect(mine).toEqual([own.template_id]);
    expect(ids(await h.get(`${TEMPLATES}?trade=plumbing&scope=service`, as(caller)))).toEqual([
      service.template_id,
    ]);
    expect(ids(await h.get(`${TEMPLATES}?trade=plumbing`, as(otherAccount)))).toEqual([]);
    const all = ids(await h.get(`${TEMPLATES}?trade=plumbing`, as(dispatcher)));
    expect(all).toEqual(expect.arrayContaining([service.template_id, own.template_id]));
    // Test mode holds the sandbox's starter checklist only.
    const sandbox = (await h.get(`${TEMPLATES}?trade=plumbing`, as(await h.dispatcherKey("test")))).json();
    expect(sandbox.templates.map((t: { name: string; scope: string }) => [t.name, t.scope])).toEqual([
      ["Plumbing call (starter)", "service"],
    ]);
    expectProblem(await h.get(`${TEMPLATES}?status=old`, as(caller)), 422, "validation_failed");
  });

  it("are retired by their owner only: another account, or an account for the service's, is told 404", async () => {
    expectProblem(
      await h.post(`${TEMPLATES}/${own.template_id}/retire`, {}, as(otherAccount)),
      404,
      "not_found",
    );
    expectProblem(
      await h.post(`${TEMPLATES}/${service.template_id}/retire`, {}, as(caller)),
      404,
      "not_found",
    );
    expectProblem(await h.post(`${TEMPLATES}/clt_nope/retire`, {}, as(dispatcher)), 404, "not_found");
  });
});

describe("a job's checklist", () => {
  let orderId: string;

  beforeAll(async () => {
    orderId = await newJob();
  });

  it("is shown to the account before it is fixed: the service's items, then the account's", async () => {
    const res = await checklist(caller, orderId);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.fixed_at).toBeNull();
    expect(body.template_ids).toEqual([service.template_id, own.template_id]);
    expect(body.items.map((i: Item) => i.label)).toEqual([
      "Water shut off",
      "Line pressure",
      "Repaired joint",
      "Notes",
      "Walkthrough",
    ]);
    expect(body.unanswered_required.map((i: { label: string }) => i.label)).toEqual([
      "Water shut off",
      "Line pressure",
      "Repaired joint",
      "Walkthrough",
    ]);
  });

  it("is fixed by the contractor's first read: a template created or retired later does not change it", async () => {
    const first = await checklist(holderKey, orderId);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().fixed_at).not.toBeNull();
    const later = await h.post(
      TEMPLATES,
      { trade: "plumbing", name: "Later", items: [{ kind: "yes_no", label: "Later item", required: true }] },
      as(dispatcher),
    );
    expect(later.statusCode).toBe(200);
    const again = await checklist(caller, orderId);
    expect(again.json().fixed_at).toBe(first.json().fixed_at);
    expect(again.json().items.map((i: Item) => i.label)).not.toContain("Later item");
    // A second fixing (another request's, racing the first) leaves the first standing.
    const { store } = h.services;
    const raced = await store.write((tx) =>
      store.checklists.fixOrderChecklist(
        { orderId, templateIds: ["clt_raced"], items: [], fixedAt: new Date().toISOString() },
        tx,
      ),
    );
    expect(raced.templateIds).toEqual([service.template_id, own.template_id]);
    expect(raced.fixedAt).toBe(first.json().fixed_at);
    const retired = await h.post(`${TEMPLATES}/${later.json().template_id}/retire`, {}, as(dispatcher));
    expect(retired.json().retired_at).not.toBeNull();
    // Retiring again answers the template as it is.
    const twice = await h.post(`${TEMPLATES}/${later.json().template_id}/retire`, {}, as(dispatcher));
    expect(twice.json().retired_at).toBe(retired.json().retired_at);
  });

  it("is not found for another contractor or another account (404), to read or to answer", async () => {
    expectProblem(await checklist(otherContractorKey, orderId), 404, "not_found");
    expectProblem(await checklist(otherAccount, orderId), 404, "not_found");
    const item = itemOf(service, "Water shut off").item_id;
    expectProblem(
      await answer(orderId, [{ item_id: item, value: true }], otherContractorKey),
      404,
      "not_found",
    );
    expectProblem(await answer("ord_nope", [{ item_id: item, value: true }]), 404, "not_found");
  });

  it("is answered on site only: while accepted a change is refused with 409 naming the status", async () => {
    const res = await answer(orderId, [{ item_id: itemOf(service, "Water shut off").item_id, value: true }]);
    const body = expectProblem(res, 409, "invalid_transition");
    expect(body.current_status).toBe("accepted");
    expect(await answerRecords(orderId)).toEqual([]);
  });

  it("refuses completion while required items are unanswered, naming them (409 completion_requirements_unmet)", async () => {
    await onSite(orderId);
    const body = expectProblem(await complete(orderId), 409, "completion_requirements_unmet");
    expect(body.unanswered).toEqual([
      { item_id: itemOf(service, "Water shut off").item_id, label: "Water shut off" },
      { item_id: itemOf(service, "Line pressure").item_id, label: "Line pressure" },
      { item_id: itemOf(service, "Repaired joint").item_id, label: "Repaired joint" },
      { item_id: itemOf(own, "Walkthrough").item_id, label: "Walkthrough" },
    ]);
    expect(body.detail).toContain('"Water shut off"');
    expect(body.current_status).toBe("on_site");
    expect((await checklist(caller, orderId)).json().items.every((i: Item) => i.answer === null)).toBe(true);
  });

  it("refuses answers at fault with 422 naming each, storing and sealing nothing", async () => {
    const id = (label: string) => itemOf(service, label).item_id;
    const res = await answer(orderId, [
      { item_id: id("Water shut off"), value: "yes" },
      { item_id: id("Line pressure"), value: 81 },
      { item_id: id("Repaired joint"), value: "att_notonthisorder" },
      { item_id: id("Notes"), value: "far too long" },
      { item_id: "cli_unknown", value: true },
      { item_id: id("Water shut off"), value: true },
    ]);
    const body = expectProblem(res, 422, "validation_failed");
    expect(body.errors).toEqual([
      { field: "answers.0.value", message: "must be true or false (a yes/no item)" },
      { field: "answers.1.value", message: "must be at most 80 psi" },
      {
        field: "answers.2.value",
        message: "no photo att_notonthisorder on this order: upload it first, then name it",
      },
      { field: "answers.3.value", message: "must be at most 10 characters" },
      { field: "answers.4.item_id", message: "no item cli_unknown on this job's checklist" },
      { field: "answers.5.item_id", message: `${id("Water shut off")} is answered twice in this request` },
    ]);
    const tooMany = Array.from({ length: 101 }, () => ({ item_id: id("Water shut off"), value: true }));
    expect(expectProblem(await answer(orderId, tooMany), 422, "validation_failed").errors[0].field).toBe(
      "answers",
    );
    expectProblem(await answer(orderId, []), 422, "validation_failed");
    expectProblem(
      await answer(orderId, [{ item_id: id("Notes"), value: { a: 1 } }]),
      422,
      "validation_failed",
    );
    expect(await answerRecords(orderId)).toEqual([]);
    expect(await h.services.store.checklists.answers(orderId)).toEqual([]);
  });

  it("saves answers as the contractor goes, each sealed in the order's audit log", async () => {
    const photo = await uploadPhoto(orderId);
    const id = (label: string) => itemOf(service, label).item_id;
    const res = await answer(orderId, [
      { item_id: id("Water shut off"), value: true },
      { item_id: id("Line pressure"), value: 45.5 },
      { item_id: id("Repaired joint"), value: photo },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().unanswered_required).toEqual([
      { item_id: itemOf(own, "Walkthrough").item_id, label: "Walkthrough" },
    ]);
    const records = await answerRecords(orderId);
    expect(records).toHaveLength(3);
    const pressure = records.find((r) => r.disclosed.item_id === id("Line pressure"));
    expect(pressure?.disclosed).toMatchObject({
      label: "Line pressure",
      kind: "number",
      value: 45.5,
      unit: "psi",
      template_id: service.template_id,
    });
    const shown = res.json().items.find((i: Item) => i.item_id === id("Line pressure"));
    expect(shown.answer).toMatchObject({ value: 45.5 });
    expect(shown.answer.record.seal).toBe(pressure?.seal);
    expect((await h.get(`/api/attest/verify/${pressure?.seal}`)).statusCode).toBe(200);
  });

  it("discloses each answer to every role, the contractor named by its id to itself and the team, by its handle to the account", async () => {
    const water = itemOf(service, "Water shut off").item_id;
    const find = async (key: string, path?: string) =>
      (await answerRecords(orderId, key, path)).find((r) => r.disclosed.item_id === water);
    const account = await find(caller);
    const team = await find(dispatcher, "/api/dispatcher/v1/audit");
    const own = await find(holderKey, "/api/contractor/v1/audit");
    for (const record of [account, team, own]) {
      expect(record?.disclosed).toMatchObject({
        item_id: itemOf(service, "Water shut off").item_id,
        value: true,
      });
    }
    expect(account?.disclosed.contractor_id).toBeUndefined();
    expect(account?.disclosed.contractor_ref).toMatch(/^cref-/);
    expect(team?.disclosed.contractor_id).toMatch(/^ctr_a/);
    expect(own?.disclosed.contractor_id).toMatch(/^ctr_a/);
  });

  it("accepts the same answers sent again (a replayed offline queue) without a new record; a change is a new one", async () => {
    const id = (label: string) => itemOf(service, label).item_id;
    const again = await answer(orderId, [
      { item_id: id("Water shut off"), value: true },
      { item_id: id("Line pressure"), value: 45.5 },
    ]);
    expect(again.statusCode, again.body).toBe(200);
    expect(await answerRecords(orderId)).toHaveLength(3);
    const changed = await answer(orderId, [{ item_id: id("Line pressure"), value: 50 }]);
    expect(changed.statusCode, changed.body).toBe(200);
    expect(await answerRecords(orderId)).toHaveLength(4);
    const shown = changed.json().items.find((i: Item) => i.item_id === id("Line pressure"));
    expect(shown.answer.value).toBe(50);
  });

  it("lets the job complete once every required item is answered; then a change is refused, a replay accepted", async () => {
    const walk = itemOf(own, "Walkthrough").item_id;
    expect((await answer(orderId, [{ item_id: walk, value: false }])).statusCode).toBe(200);
    const done = await complete(orderId);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().status).toBe("completed");
    expect((await answer(orderId, [{ item_id: walk, value: false }])).statusCode).toBe(200);
    const late = await answer(orderId, [{ item_id: walk, value: true }]);
    expect(expectProblem(late, 409, "invalid_transition").current_status).toBe("completed");
  });

  it("is read with its answers by the account and the dispatch team", async () => {
    for (const key of [caller, dispatcher]) {
      const res = await checklist(key, orderId);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().unanswered_required).toEqual([]);
      expect(res.json().items.filter((i: Item) => i.answer !== null)).toHaveLength(4);
    }
  });
});

describe("an offered job", () => {
  it("shows its contractor what the job would ask, and an answer is refused (409) without fixing the checklist", async () => {
    const placed = await h.post(ORDER_PATH, JOB, as(caller));
    expect(placed.statusCode, placed.body).toBe(200);
    const orderId = placed.json().order_id as string;
    const read = await checklist(holderKey, orderId);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().fixed_at).toBeNull();
    const item = itemOf(service, "Water shut off").item_id;
    const refused = expectProblem(
      await answer(orderId, [{ item_id: item, value: true }]),
      409,
      "invalid_transition",
    );
    expect(refused.current_status).toBe("offered");
    expect(await h.services.store.checklists.orderChecklist(orderId)).toBeUndefined();
    const cancelled = await h.post("/api/dispatch/v1/orders/cancel", { order_id: orderId }, as(caller));
    expect(cancelled.statusCode, cancelled.body).toBe(200);
  });
});

describe("an account's template that replaces the service's", () => {
  it("gives the account's orders of its trade its items alone", async () => {
    const key = await h.key("solo", "live");
    const made = await h.post(
      TEMPLATES,
      {
        trade: "plumbing",
        name: "Solo",
        replaces_service: true,
        items: [{ kind: "text", label: "Summary" }],
      },
      as(key),
    );
    expect(made.statusCode, made.body).toBe(200);
    const order = await h.post(ORDER_PATH, JOB, as(key));
    expect(order.statusCode, order.body).toBe(200);
    const res = await checklist(key, order.json().order_id);
    expect(res.json().items.map((i: Item) => i.label)).toEqual(["Summary"]);
    expect(res.json().unanswered_required).toEqual([]);
  });
});
