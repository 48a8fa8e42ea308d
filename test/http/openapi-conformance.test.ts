// The OpenAPI document against the server that publishes it, in the spirit of Schemathesis (which runs on
// Python, not here): /openapi.json is fetched from a harness server on 127.0.0.1, every schema in it is
// compiled by Ajv in JSON Schema 2020-12 mode (strict, with the formats), and each operation is driven
// with requests drawn from its own request schemas by fast-check: a bounded number per operation
// (CONFORMANCE_RUNS, 12 by default, within 30 s), its example first, under a key of the kind it takes,
// with ids of a real world of resources (security-suite.ts) offered beside the generated ones, and now and
// then a parameter that is any text, a body that is any JSON or no body at all. Every answer's status
// must be documented for the operation and below 500, its content type one the document lists for that
// status, its body valid against that media type's schema and its required headers present; a request
// the schemas refuse must be refused (4xx). Then Schemathesis's other checks: each keyed operation
// without a key is 401, and a method a documented path does not take is 405 with Allow naming those it
// does. Requests go only to the harness server; the readiness probe only probes a local storefront. It
// runs on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set.

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { counterOffer } from "../../src/operations/orders/command-runner.js";
import { OPERATIONS } from "../../src/operations/registry.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { arbitraryOf, type JsonSchema, type SchemaContext } from "../helpers/json-schema-arbitrary.js";
import { buildWorld, type World } from "../helpers/security-suite.js";
import { exemplary, type Storefront, startStorefront } from "../helpers/storefronts.js";

/** Requests drawn per operation, besides its example. */
const RUNS = Number(process.env.CONFORMANCE_RUNS ?? 12);
/** The longest one operation's requests may take in all; what is left undrawn then is not a failure. */
const TIME_LIMIT_MS = 30_000;
const HIGH = "1000000";

/** The URI the document is known to Ajv by: its own `#/components/...` references resolve against it. */
const DOCUMENT_URI = "https://field-dispatch.invalid/openapi.json";

interface DocumentedOperation {
  id: string;
  method: string;
  path: string;
  pointer: string;
  operation: JsonSchema;
}

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

let h: Harness;
let shop: Storefront;
let world: World;
let base: string;
let doc: JsonSchema;
let ajv: Ajv2020;
const statuses = new Map<string, Map<number, number>>();

/** A JSON pointer's segment, escaped for a URI fragment. */
const segment = (s: string) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"));

const compiled = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  const known = compiled.get(pointer);
  if (known) return known;
  const validate = ajv.compile({ $ref: `${DOCUMENT_URI}#${pointer}` });
  compiled.set(pointer, validate);
  return validate;
}

// A CommonJS module: its function is the default export's `default`, whichever way it is loaded.
const addFormats = addFormatsModule.default;

function newAjv(): Ajv2020 {
  const instance = new Ajv2020({ strict: true, allErrors: true });
  addFormats(instance);
  // OpenAPI's own keyword in a schema, and the document's members around the schemas.
  instance.addVocabulary(["example", "components", "paths", "webhooks"]);
  return instance;
}

function operationsOf(document: JsonSchema): DocumentedOperation[] {
  return Object.entries(document.paths as Record<string, Record<string, JsonSchema>>).flatMap(
    ([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        id: operation.operationId as string,
        method: method.toUpperCase(),
        path,
        pointer: `/paths/${segment(path)}/${method}`,
        operation,
      })),
  );
}

/** The documented answer for a status, its shared component resolved, with the pointer to it. */
function documentedAnswer(
  op: DocumentedOperation,
  status: number,
): { answer: JsonSchema; pointer: string } | null {
  const entry = op.operation.responses?.[String(status)];
  if (!entry) return null;
  if (typeof entry.$ref === "string") {
    const name = entry.$ref.split("/").pop() as string;
    return { answer: doc.components.responses[name], pointer: `/components/responses/${segment(name)}` };
  }
  return { answer: entry, pointer: `${op.pointer}/responses/${status}` };
}

const resolveHeader = (header: JsonSchema) =>
  typeof header.$ref === "string" ? doc.components.headers[header.$ref.split("/").pop() as string] : header;

/** What the document says of this answer: fails (throws) on the first thing it does not. */
function checkAnswer(op: DocumentedOperation, res: Answer): void {
  const where = `${op.id} answered ${res.status}: ${res.body.slice(0, 500)}`;
  expect(res.status, `${where} (a 5xx is a bug)`).toBeLessThan(500);
  const documented = documentedAnswer(op, res.status);
  expect(documented, `${where}: the status is not documented`).not.toBeNull();
  if (!documented) return;
  const type = (res.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  const media = documented.answer.content?.[type];
  expect(media, `${where}: ${type} is not documented for it`).toBeDefined();
  // A file (a download's bytes, documented as a string of its media type) is not JSON to validate.
  if (media?.schema?.contentMediaType === undefined) {
    const validate = validatorAt(`${documented.pointer}/content/${segment(type)}/schema`);
    const body = JSON.parse(res.body);
    expect(validate(body), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  for (const [name, declared] of Object.entries(documented.answer.headers ?? {})) {
    const header = resolveHeader(declared);
    const value = res.headers.get(name);
    if (header.required) expect(value, `${where}: no ${name} header`).not.toBeNull();
    if (value !== null && header.schema?.type === "integer")
      expect(value, `${where}: ${name}`).toMatch(/^\d+$/);
  }
}

/** Values of the world's resources, by the property names the operations' examples give them. */
function knownValues(): Record<string, string[]> {
  const byPrefix = new Map(Object.values(world.ids).map((id) => [id.slice(0, id.indexOf("_")), id]));
  const known: Record<string, string[]> = {};
  const visit = (value: unknown, name: string) => {
    if (typeof value === "string") {
      const id = byPrefix.get(value.slice(0, value.indexOf("_")));
      if (id && /^[a-z]+_[0-9A-Za-z]+$/.test(value)) known[name] = [id];
    } else if (value && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, Array.isArray(value) ? name : key);
    }
  };
  for (const op of OPERATIONS) visit(op.example, "");
  return known;
}

/** The example with each id replaced by the world's resource of that kind. */
function resolved(value: unknown, known: Record<string, string[]>, name = ""): unknown {
  if (typeof value === "string") return known[name]?.[0] ?? value;
  if (Array.isArray(value)) return value.map((v) => resolved(v, known, name));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolved(v, known, k)]));
  }
  return value;
}

interface Drawn {
  params: Record<string, unknown>;
  body?: unknown;
}

/** A local storefront, its pages, and URLs refused before any lookup: the probe fetches nothing else. */
function probeUrls(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(`${shop.origin}/`),
    fc.webPath().map((path) => `${shop.origin}${path}`),
    fc.constantFrom("ftp://shop.example/", "http://127.0.0.1:1/", `${shop.origin}/${"a".repeat(300)}`),
  );
}

/** A parameter's value: one its schema accepts mostly, now and then any short text (not in a header). */
function parameterArbitrary(p: JsonSchema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const valid = arbitraryOf(p.schema, ctx);
  const real = ctx.known?.[p.name];
  const drawn = real && real.length > 0 ? fc.oneof(valid, fc.constantFrom(...real)) : valid;
  if (p.in === "header") return drawn;
  return fc.oneof({ weight: 5, arbitrary: drawn }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
}

/** Whether a parameter's value, as text on the wire, is one its schema accepts (numbers read as numbers). */
function parameterValid(op: DocumentedOperation, index: number, text: string): boolean {
  const validate = validatorAt(`${op.pointer}/parameters/${index}/schema`);
  if (validate(text)) return true;
  // A number in a query is read as JavaScript's Number() reads the text (the operations' z.coerce.number):
  // "1." and "1e0" are 1. That reading is the server's contract; a stricter one is a change of contract.
  const n = Number(text);
  return Number.isFinite(n) && validate(n);
}

function requestArbitrary(op: DocumentedOperation, ctx: SchemaContext): fc.Arbitrary<Drawn> {
  const parameters = (op.operation.parameters ?? []) as JsonSchema[];
  const params = fc.record(Object.fromEntries(parameters.map((p) => [p.name, parameterArbitrary(p, ctx)])), {
    requiredKeys: parameters.filter((p) => p.required).map((p) => p.name as string),
  }) as fc.Arbitrary<Record<string, unknown>>;
  const media = op.operation.requestBody?.content?.["application/json"];
  if (!media) return params.map((p) => ({ params: p }));
  const probe = op.id === "agenticCommerceProbe";
  const valid = probe ? fc.record({ url: probeUrls() }) : arbitraryOf(media.schema, ctx);
  // Any JSON at all now and then; for the probe never an object naming another host to fetch.
  const anyJson = fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => !probe || typeof v !== "object" || v === null || !("url" in v));
  // And now and then no body at all (which only a body not marked required may be).
  const body = fc.oneof(
    { weight: 8, arbitrary: valid },
    { weight: 2, arbitrary: anyJson },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  return fc.record({ params, body });
}

/** What of a request its schemas refuse, if anything: a parameter's value or the body. */
function refusedPart(op: DocumentedOperation, drawn: Drawn, body: ValidateFunction | null): string | null {
  for (const [i, p] of ((op.operation.parameters ?? []) as JsonSchema[]).entries()) {
    const value = drawn.params[p.name];
    if (value !== undefined && !parameterValid(op, i, String(value))) {
      return `${p.in} parameter ${p.name}=${JSON.stringify(String(value))}, which its schema refuses`;
    }
  }
  if (!body) return null;
  if (drawn.body === undefined)
    return op.operation.requestBody.required ? "no body, which is required" : null;
  return body(drawn.body) ? null : `a body its schema refuses: ${JSON.stringify(drawn.body)}`;
}

function keyFor(id: string): Record<string, string> {
  const access = OPERATIONS.find((o) => o.id === id)?.access;
  if (access === undefined || access === "public") return {};
  const kind = access === "contractor" ? "contractor" : access === "dispatcher" ? "dispatcher" : "account";
  return { "x-api-key": world.owner[kind] };
}

async function send(
  op: DocumentedOperation,
  drawn: Drawn,
  accept = "application/json",
  key = keyFor(op.id),
): Promise<Answer> {
  const parameters = (op.operation.parameters ?? []) as JsonSchema[];
  const headers: Record<string, string> = { ...key, accept };
  const query = new URLSearchParams();
  let path = op.path;
  for (const p of parameters) {
    const value = drawn.params[p.name];
    if (value === undefined) continue;
    if (p.in === "path") path = path.replace(`{${p.name}}`, encodeURIComponent(String(value)));
    else if (p.in === "query") query.set(p.name, String(value));
    else if (p.in === "header") headers[p.name] = String(value);
  }
  const init: RequestInit = {
    method: op.method,
    headers,
    redirect: "manual",
    signal: AbortSignal.timeout(20_000),
  };
  if (drawn.body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(drawn.body);
  }
  const search = query.toString();
  const res = await fetch(`${base}${path}${search ? `?${search}` : ""}`, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
}

beforeAll(async () => {
  shop = await startStorefront(exemplary);
  h = await createHarness({
    KEY_RATE_LIMIT_PER_MINUTE: HIGH,
    KEY_RATE_LIMIT_BURST: HIGH,
    PUBLIC_RATE_LIMIT_PER_MINUTE: HIGH,
    PUBLIC_RATE_LIMIT_BURST: HIGH,
    PROBE_RATE_LIMIT_PER_MINUTE: HIGH,
    PROBE_RATE_LIMIT_BURST: HIGH,
    PROBE_ALLOW_PRIVATE_NETWORKS: "true",
    PROBE_ALLOWED_PORTS: String(shop.port),
  });
  world = await buildWorld(h);
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
  doc = await (await fetch(`${base}/openapi.json`)).json();
  ajv = newAjv();
  // The whole document, so that each schema's `#/components/...` references resolve in it.
  ajv.addSchema({ $id: DOCUMENT_URI, components: doc.components, paths: doc.paths, webhooks: doc.webhooks });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await shop?.close();
});

/** Compiles every schema of the document: components, and each operation's parameters, bodies, answers. */
function compileEverySchema(): void {
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, JsonSchema>)) {
    expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
  }
  for (const name of Object.keys(doc.components.schemas)) validatorAt(`/components/schemas/${segment(name)}`);
  let schemas = 0;
  for (const op of operationsOf(doc)) {
    for (const i of ((op.operation.parameters ?? []) as JsonSchema[]).keys()) {
      validatorAt(`${op.pointer}/parameters/${i}/schema`);
      schemas++;
    }
    for (const type of Object.keys(op.operation.requestBody?.content ?? {})) {
      validatorAt(`${op.pointer}/requestBody/content/${segment(type)}/schema`);
      schemas++;
    }
    for (const status of Object.keys(op.operation.responses)) {
      const documented = documentedAnswer(op, Number(status));
      for (const type of Object.keys(documented?.answer.content ?? {})) {
        validatorAt(`${documented?.pointer}/content/${segment(type)}/schema`);
        schemas++;
      }
    }
  }
  expect(schemas).toBeGreaterThan(OPERATIONS.length * 2);
}

/** A sandbox plumber of its own in San Francisco, on call at any hour, away from the world's Austin jobs. */
let counterCrew: Promise<void> | undefined;

/** An order of the world's owner with a counter-offer waiting on it, made by the contractor offered it. */
async function waitingCounter(): Promise<string> {
  counterCrew ??= (async () => {
    await h.services.store.contractors.insert(
      [liveContractor({ pool: "sandbox", id: `ctr_counter${Math.random().toString(36).slice(2, 8)}` })],
      testRecord(),
    );
    await h.services.pool.load();
  })();
  await counterCrew;
  // An emergency: offered at once whatever the hour.
  const job = {
    trade: "plumbing",
    urgency: "emergency",
    location: { state: "CA", zip: "94103" },
    description: "Burst pipe",
  };
  const res = await h.post(ORDER_PATH, job, { "x-api-key": world.owner.account });
  if (res.statusCode !== 200) throw new Error(`no order for a counter: ${res.body}`);
  const order = res.json() as { order_id: string; estimated_cost_cents: number };
  const offer = (await h.services.store.orders.offersOf(order.order_id)).find((o) => o.status === "pending");
  if (!offer) throw new Error(`the order for a counter was not offered: ${res.body}`);
  await counterOffer(h.services, {
    offerId: offer.id,
    contractor: { contractorId: offer.contractor_id, livemode: false },
    priceCents: order.estimated_cost_cents + 1_000,
    window: null,
    note: null,
    actor: `contractor:${offer.contractor_id}`,
  });
  return order.order_id;
}

/** Operations whose example needs a state the one world cannot hold for every operation (a counter-offer
 * waiting on the account: one answer settles it): made afresh before the operation is driven. */
const PREPARED: Record<string, () => Promise<Record<string, string[]>>> = {
  dispatchCounterAccept: async () => ({ order_id: [await waitingCounter()] }),
  dispatchCounterDecline: async () => ({ order_id: [await waitingCounter()] }),
};

/** Drives one operation with its example and drawn requests, checking every answer against the document. */
async function driveOperation(id: string): Promise<void> {
  const op = operationsOf(doc).find((o) => o.id === id);
  if (!op) throw new Error(`${id} is not in the document`);
  const known = { ...knownValues(), ...(await PREPARED[id]?.()) };
  const ctx: SchemaContext = { components: doc.components.schemas, known, now: new Date() };
  const media = op.operation.requestBody?.content?.["application/json"];
  const requestValid = media
    ? validatorAt(`${op.pointer}/requestBody/content/application~1json/schema`)
    : null;
  const example = resolved(OPERATIONS.find((o) => o.id === id)?.example ?? {}, known) as Record<
    string,
    unknown
  >;
  const asDrawn: Drawn = media ? { params: {}, body: example } : { params: example };
  const seen = new Map<number, number>();
  statuses.set(id, seen);
  await fc.assert(
    fc.asyncProperty(requestArbitrary(op, ctx), async (drawn) => {
      const res = await send(op, drawn);
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      checkAnswer(op, res);
      const refused = refusedPart(op, drawn, requestValid);
      if (refused) expect(res.status, `${id} accepted ${refused}`).toBeGreaterThanOrEqual(400);
    }),
    { numRuns: RUNS, examples: [[asDrawn]], endOnFailure: true, interruptAfterTimeLimit: TIME_LIMIT_MS },
  );
}

/** Each keyed operation's example, sent without a key. */
async function refusedWithoutKey(): Promise<void> {
  const known = knownValues();
  for (const op of operationsOf(doc)) {
    if ((op.operation.security ?? []).length === 0) continue;
    const example = resolved(OPERATIONS.find((o) => o.id === op.id)?.example ?? {}, known);
    const drawn: Drawn = op.operation.requestBody
      ? { params: {}, body: example }
      : { params: example as Record<string, unknown> };
    const res = await send(op, drawn, "application/json", {});
    expect(res.status, `${op.id}: ${res.body}`).toBe(401);
    checkAnswer(op, res);
  }
}

/** Each documented path with each method none of the operations at its URL takes. */
async function refusedMethods(): Promise<void> {
  const problem = validatorAt("/components/schemas/Problem");
  const templates = Object.entries(doc.paths as Record<string, Record<string, unknown>>).map(
    ([path, item]) => ({
      pattern: new RegExp(`^${path.replace(/\{[a-z_]+\}/g, "[^/]+")}$`),
      methods: Object.keys(item).map((m) => m.toUpperCase()),
    }),
  );
  for (const path of Object.keys(doc.paths)) {
    const concrete = path.replace(/\{[a-z_]+\}/g, "x1");
    // Every documented operation at this URL: /orders/cancel is also an {order_id} of /orders/{order_id}.
    const documented = [
      ...new Set(templates.filter((t) => t.pattern.test(concrete)).flatMap((t) => t.methods)),
    ];
    const expected = documented.includes("GET") ? [...documented, "HEAD"] : documented;
    for (const method of ["PUT", "PATCH", "DELETE", "GET", "POST"].filter((m) => !documented.includes(m))) {
      const res = await fetch(`${base}${concrete}`, {
        method,
        headers: { "content-type": "application/json" },
      });
      const where = `${method} ${path}`;
      expect(res.status, where).toBe(405);
      expect(res.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
      expect(problem(await res.json()), where).toBe(true);
      expect((res.headers.get("allow") ?? "").split(", ").sort(), where).toEqual(expected.sort());
    }
  }
}

/** The event stream's head, then the stream abandoned. */
async function streamHead(): Promise<void> {
  const op = operationsOf(doc).find((o) => o.id === "dispatchEvents");
  if (!op) throw new Error("dispatchEvents is not in the document");
  const controller = new AbortController();
  const res = await fetch(`${base}${op.path}`, {
    headers: { ...keyFor(op.id), accept: "text/event-stream" },
    signal: controller.signal,
  });
  const type = (res.headers.get("content-type") ?? "").split(";")[0];
  const documented = documentedAnswer(op, res.status);
  controller.abort();
  expect(res.status).toBe(200);
  expect(Object.keys(documented?.answer.content ?? {})).toContain(type);
  expect(res.headers.get("request-id")).toBeTruthy();
}

describe("the OpenAPI document against its server", () => {
  it("is compiled by Ajv in JSON Schema 2020-12 mode: every component and every schema of every operation", () =>
    compileEverySchema());

  it.each(OPERATIONS.map((o) => [o.id]))(
    "%s: every answer to requests drawn from its schemas is documented, and matches",
    (id) => driveOperation(id),
    TIME_LIMIT_MS + 30_000,
  );

  it("refuses each keyed operation's example without a key: 401, as documented", () => refusedWithoutKey());

  it("answers a method a documented path does not take with 405, Allow naming the documented ones", () =>
    refusedMethods());

  it("serves the event stream as its documented text/event-stream", () => streamHead());

  it("reached most operations' results, not only their refusals", () => {
    const answered = [...statuses.entries()].filter(([, seen]) => (seen.get(200) ?? 0) > 0).map(([id]) => id);
    expect(answered.length, `only ${answered.join(", ")}`).toBeGreaterThanOrEqual(OPERATIONS.length * 0.7);
  });
});
