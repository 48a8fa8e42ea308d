// The shared security suite, generated from the registry: every keyed operation (access key, contractor or
// dispatcher) gets the same tests, so an operation added later is covered without an edit here. Each is
// called the way its REST route takes it (method, path, body or query), with its own `example` as input:
// no key, malformed key, bad checksum, unknown key, revoked key, a key of the wrong kind, dispatch
// disabled, the rate limit (and that a bad key never spends it), and the scoping of its resources (another
// account's or contractor's key, the other mode's key). For the scoping tests the example's ids (ord_...,
// ofr_..., nte_..., ctr_..., whe_..., whd_...) are replaced by real resources of a small world built for
// the operation (buildWorld); an operation whose example names an id the world cannot provide fails the
// coverage test, unless it is exempted below with its reason.

import type { LightMyRequestResponse } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../../src/auth/api-key.js";
import { CONTRACTOR_REF_PATTERN } from "../../src/auth/contractor-refs.js";
import { type IdPrefix, newSortableId } from "../../src/ids.js";
import type { AnyOperation } from "../../src/operations/kernel/operation.js";
import { planCreateOperation } from "../../src/operations/maintenance/plans.js";
import { notificationSubscribersSetOperation } from "../../src/operations/notifications/notification-people.js";
import { attachmentUploadOperation } from "../../src/operations/orders/attachments.js";
import { checklistTemplateCreateOperation } from "../../src/operations/orders/checklist-templates.js";
import {
  contractorAcceptOperation,
  contractorNteRequestOperation,
} from "../../src/operations/orders/contractor-actions.js";
import { counterPolicySetOperation } from "../../src/operations/orders/counter-offers.js";
import { orderOperation } from "../../src/operations/orders/create-order.js";
import {
  dispatcherAssignOperation,
  dispatcherCancelOperation,
} from "../../src/operations/orders/dispatcher-actions.js";
import { doNotDispatchAddOperation } from "../../src/operations/orders/do-not-dispatch.js";
import { invoicePolicySetOperation } from "../../src/operations/orders/invoice-decisions.js";
import { proofRequirementsSetOperation } from "../../src/operations/orders/proof-requirements.js";
import { scheduleOptimizeOperation } from "../../src/operations/pool/schedule.js";
import {
  contractorTimeOffAddOperation,
  dispatcherTimeOffAddOperation,
} from "../../src/operations/pool/time-off.js";
import { OPERATIONS } from "../../src/operations/registry.js";
import { requestLinkOperation } from "../../src/operations/requests/request-links.js";
import { requestPolicySetOperation } from "../../src/operations/requests/request-policy.js";
import { requestCreateOperation } from "../../src/operations/requests/requests.js";
import { assetCreateOperation } from "../../src/operations/sites/assets.js";
import { siteCreateOperation } from "../../src/operations/sites/sites.js";
import { trackingLinkOperation } from "../../src/operations/tracking/tracking-links.js";
import {
  webhooksDeliveriesOperation,
  webhooksRotateSecretOperation,
  webhooksSetEndpointOperation,
} from "../../src/operations/webhooks/webhook-settings.js";
import { liveContractor, testRecord } from "./fixtures.js";
import { createHarness, type Harness } from "./harness.js";
import { orderFixture } from "./order-fixture.js";

export function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(res.headers["request-id"]).toBeTruthy();
  const body = res.json();
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.request_id).toBe(res.headers["request-id"]);
  expect(typeof body.detail).toBe("string");
  expect(body.type).toBe(`/problems/${code}`);
  return body;
}

/**
 * Keyed operations whose resources the suite cannot scope-test from their example and the world (each
 * still gets the key, kind, disabled and limit tests). Every entry says why; an entry for an operation
 * that is drivable, or no longer keyed, fails the coverage test, so the list cannot go stale.
 */
export const SCOPE_EXEMPT: Readonly<Record<string, string>> = {};

type KeyKind = "account" | "contractor" | "dispatcher";
type Mode = "test" | "live";
// biome-ignore lint/suspicious/noExplicitAny: examples and JSON bodies of every operation.
type Json = any;

/** The kind of key each access level is driven with; `any_key` takes every kind (driven as an account's). */
const KIND_OF: Record<Exclude<AnyOperation["access"], "public">, KeyKind> = {
  key: "account",
  contractor: "contractor",
  dispatcher: "dispatcher",
  any_key: "account",
};

/** The kinds of key `op` refuses with 403 key_kind_not_allowed. */
function refusedKinds(op: AnyOperation, kind: KeyKind): KeyKind[] {
  if (op.access === "any_key") return [];
  return (["account", "contractor", "dispatcher"] as const).filter((k) => k !== kind);
}

/** Every id prefix of src/ids.ts (the type check below fails when one is added there and not here). */
const ID_PREFIXES = [
  "acct",
  "key",
  "ord",
  "qte",
  "ofr",
  "nte",
  "ctr",
  "req",
  "hold",
  "msg",
  "whe",
  "whd",
  "wha",
  "whs",
  "prp",
  "off",
  "att",
  "upl",
  "clt",
  "cli",
  "dnd",
  "ivd",
  "site",
  "ast",
  "mpl",
  "wrq",
  "ntf",
  "nev",
  "nta",
] as const satisfies readonly IdPrefix[];
const everyPrefixListed: Exclude<IdPrefix, (typeof ID_PREFIXES)[number]> extends never ? true : false = true;
void everyPrefixListed;

/** The ids the world provides, by prefix; and `cref`, the owner account's handle of a contractor (an
 * account names a contractor by its handle: another account's handle of it is another string). */
const RESOLVED = [
  "ntf",
  "ord",
  "ofr",
  "nte",
  "ctr",
  "whe",
  "whd",
  "prp",
  "off",
  "att",
  "clt",
  "cli",
  "dnd",
  "key",
  "site",
  "mpl",
  "ast",
  "wrq",
  "cref",
] as const;
type Resolved = (typeof RESOLVED)[number];

const ID_VALUE = new RegExp(`^(${ID_PREFIXES.join("|")})_[0-9A-Za-z]+$`);
/** Ids in a response, audit seals (seal_...) among them: a seal names a decision of its tenant. */
const ID_IN_TEXT = new RegExp(`\\b(?:${[...ID_PREFIXES, "seal"].join("|")})_[0-9A-Za-z]{10,}\\b`, "g");

/** The id prefixes an example refers to, at any depth. */
function referencedPrefixes(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === "string") {
    const m = ID_VALUE.exec(value);
    if (m?.[1]) out.add(m[1]);
    else if (CONTRACTOR_REF_PATTERN.test(value)) out.add("cref");
  } else if (Array.isArray(value)) {
    for (const v of value) referencedPrefixes(v, out);
  } else if (value && typeof value === "object") {
    for (const v of Object.values(value)) referencedPrefixes(v, out);
  }
  return out;
}

/** The example with each id replaced by the world's resource of that prefix. */
function resolve(value: unknown, ids: Record<Resolved, string>): unknown {
  if (typeof value === "string") {
    if (CONTRACTOR_REF_PATTERN.test(value)) return ids.cref;
    const prefix = ID_VALUE.exec(value)?.[1];
    return prefix && prefix in ids ? ids[prefix as Resolved] : value;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, ids));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, ids)]));
  }
  return value;
}

const pathParams = (op: AnyOperation) =>
  [...op.http.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);

/** Why the suite cannot scope-test `op` from its example, or null when it can. */
function undrivable(op: AnyOperation): string | null {
  const unknown = [...referencedPrefixes(op.example)].filter(
    (p) => !(RESOLVED as readonly string[]).includes(p),
  );
  if (unknown.length > 0)
    return `its example names ${unknown.map((p) => `${p}_`).join(", ")} ids the world has none of`;
  const example = op.example as Record<string, unknown>;
  const missing = pathParams(op).filter((p) => typeof example?.[p] !== "string");
  if (missing.length > 0) return `its example has no value for path parameter(s) ${missing.join(", ")}`;
  if (op.limit !== "key") return `it is limited by ${op.limit}, not by key`;
  return null;
}

/** What the operation does with a resource of the example: reads a list (a view), acts on or reads one
 * named resource (a target), or creates something of the caller's own (self). */
function shapeOf(op: AnyOperation): "view" | "target" | "self" {
  if (op.http.method === "GET" && op.http.input !== "params") return "view";
  return referencedPrefixes(op.example).size > 0 || op.http.input === "params" ? "target" : "self";
}

/** Percent-encodes `text` as UTF-8; a lone surrogate (which UTF-8 cannot hold) as the three bytes a
 * careless client would send for it (WTF-8), where encodeURIComponent would throw. */
function percentEncode(text: string): string {
  let out = "";
  for (const ch of text) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join("");
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAADklEQVQImWPoAAMGCAUALK4GYSSeFPoAAAAASUVORK5CYII=";

/** Calls `op` over REST with `input` as its route takes it (path parameters, query string or JSON body). */
export function callOperation(
  h: Harness,
  op: AnyOperation,
  input: unknown,
  headers: Record<string, string>,
): Promise<LightMyRequestResponse> {
  const values = (input ?? {}) as Record<string, unknown>;
  let url = op.http.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => percentEncode(String(values[name])));
  if (op.http.input === "query") {
    const query = Object.entries(values)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${percentEncode(k)}=${percentEncode(String(v))}`)
      .join("&");
    if (query) url += `?${query}`;
  }
  // As an API client asks for JSON: a streaming operation (the event stream) then answers one page.
  const asked = { accept: "application/json", ...headers };
  if (op.http.method === "GET") return h.get(url, asked);
  if (op.upload) {
    // An operation that takes a file: a 2x2 PNG, as multipart/form-data.
    const boundary = "----security-suite";
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="dot.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      Buffer.from(TINY_PNG, "base64"),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return h.app.inject({
      method: "POST",
      url,
      headers: { ...asked, "content-type": `multipart/form-data; boundary=${boundary}` },
      payload,
    });
  }
  return h.post(url, op.http.input === "body" ? values : {}, asked);
}

/** The ids of this service's resources in a response body. */
function idsIn(body: string): Set<string> {
  // Account ids are left out: an account is the same in both modes (its test and live keys share it), so a
  // live view may name an account that also has test-mode resources.
  return new Set((body.match(ID_IN_TEXT) ?? []).filter((id) => !id.startsWith("acct_")));
}

async function issue(
  h: Harness,
  kind: KeyKind,
  mode: Mode,
  options: { account?: string; contractorId?: string; ratePerMinute?: number; burst?: number } = {},
) {
  return h.services.keys.issue({
    accountName: options.account ?? `${kind}-${Math.random().toString(36).slice(2, 10)}`,
    mode,
    actor: "operator:test",
    kind,
    contractorId: kind === "contractor" ? (options.contractorId ?? null) : null,
    ratePerMinute: options.ratePerMinute ?? null,
    burst: options.burst ?? null,
  });
}

let contractorSeq = 0;
/** A fresh contractor of `pool` (nothing in the store holds it yet). */
async function freshContractor(h: Harness, pool: "sandbox" | "live"): Promise<string> {
  const id = `ctr_sec${pool === "live" ? "L" : "S"}${++contractorSeq}${Math.random().toString(36).slice(2, 8)}`;
  await h.services.store.contractors.insert([liveContractor({ id, pool })], testRecord());
  return id;
}

async function ok(res: Promise<LightMyRequestResponse>, what: string): Promise<Json> {
  const r = await res;
  expect(r.statusCode, `${what}: ${r.body}`).toBe(200);
  return r.json();
}

/** One mode's resources of every kind, the keys that own them, and keys of another tenant and mode. */
export interface World {
  /** The resource each id prefix of an example stands for. */
  ids: Record<Resolved, string>;
  /** The test-mode key of each kind that owns (or, for the dispatch team, may act on) the resources. */
  owner: Record<KeyKind, string>;
  /** A key of the same kind and mode for another tenant: another account, another contractor, another
   * dispatch-team account. */
  other: Record<KeyKind, string>;
  /** A key of the same kind in the other (live) mode: the owner account's own live key, a live contractor's,
   * a live dispatcher's. */
  otherMode: Record<KeyKind, string>;
  /** Every id of the world, none of which another tenant's answers may contain. */
  owned: string[];
  /** The world's orders, cancelled when its operation's tests are done (giving the contractors back). */
  orders: string[];
  /** A scheduled order (offered, in its earliest window) and a window a week after that one: the ord_
   * and service_window of an example that moves a window (a fixed date in an example would pass). */
  windowed: { order: string; window: { start: string; end: string } };
}

/** The example as the world drives it: ids resolved; an example with a service_window acts on the world's
 * scheduled order, moved to the world's window. */
export function inputOf(op: AnyOperation, world: World): Record<string, unknown> {
  const example = op.example as Record<string, unknown>;
  if (example && typeof example === "object" && "service_window" in example) {
    return {
      ...(resolve(example, { ...world.ids, ord: world.windowed.order }) as Record<string, unknown>),
      service_window: world.windowed.window,
    };
  }
  return resolve(op.example, world.ids) as Record<string, unknown>;
}

/**
 * Builds the world through the operations themselves, from their examples: an account with a default
 * webhook endpoint and a signing secret; two of its orders (the order operation's example), the second
 * offered to contractor C (its pending offer is ofr_), the first accepted by C (by accepting its offer, or
 * assigned by a dispatcher) with an NTE increase C asked for pending (ord_, nte_); their webhook deliveries
 * fanned out (whd_); a fresh sandbox contractor D (ctr_); a photo C added to the first order (att_); the
 * account's checklist template of the orders' trade (clt_) and its one item (cli_), on the first order's
 * checklist; the account's do-not-dispatch entry of another contractor (dnd_), and its handle of C (the
 * cref- an example names); the account's site (site_) and an asset at it (ast_).
 */
/** A kept notification of the owner's order (test mode), as the worker would have written it. */
async function seedNotification(h: Harness, accountId: string, orderId: string): Promise<string> {
  const at = h.services.now().toISOString();
  const id = newSortableId("ntf");
  await h.services.store.notifications.fanOut(newSortableId("nev"), [
    {
      id,
      event_id: `nev_sec${id.slice(4)}`,
      resend_of: null,
      account_id: accountId,
      livemode: 0,
      order_id: orderId,
      event: "booked",
      recipient: "store42@example.com",
      recipient_role: "site_contact",
      status: "kept",
      attempts: 1,
      next_attempt_at: null,
      lease_until: null,
      message_id: `<${id}@localhost>`,
      subject: "Your Plumbing visit is booked",
      text_body: "Your Plumbing visit is booked",
      html_body: "<p>Your Plumbing visit is booked</p>",
      digest: "0".repeat(64),
      last_error: null,
      created_at: at,
      updated_at: at,
      sent_at: at,
      seal: null,
    },
  ]);
  return id;
}

export async function buildWorld(h: Harness): Promise<World> {
  const tag = Math.random().toString(36).slice(2, 10);
  const account = `owner-${tag}`;
  const caller = await h.key(account, "test");
  const dispatcher = (await issue(h, "dispatcher", "test", { account: `ops-${tag}` })).key;
  const run = (op: AnyOperation, key: string, input: unknown) =>
    ok(callOperation(h, op, input, { "x-api-key": key }), op.id);
  const endpoint = await run(webhooksSetEndpointOperation, caller, webhooksSetEndpointOperation.example);
  // The account's own checklist template of the orders' trade, one yes/no item (not required: the world's
  // jobs may be completed by an operation's control).
  const template = await run(checklistTemplateCreateOperation, caller, {
    trade: orderOperation.example.trade,
    name: "the security suite's world",
    items: [{ kind: "yes_no", label: "Water shut off", required: false }],
  });
  await run(webhooksRotateSecretOperation, caller, webhooksRotateSecretOperation.example);
  const job = { ...orderOperation.example, reference_id: `sec-${tag}` };
  const second = (await run(orderOperation, caller, job)).order_id as string;
  const first = (await run(orderOperation, caller, job)).order_id as string;
  const { store } = h.services;
  const holder = async (id: string) => (await store.orders.byIds([id]))[0]?.contractor_id ?? null;
  const pendingOffer = async (id: string) =>
    (await store.orders.offersOf(id)).find((o) => o.status === "pending")?.id ?? null;
  const c = await holder(second);
  const offer = await pendingOffer(second);
  if (!c || !offer) throw new Error(`the world's second order was not offered: ${second}`);
  const contractor = (await issue(h, "contractor", "test", { contractorId: c })).key;
  const firstOffer = await pendingOffer(first);
  if ((await holder(first)) === c && firstOffer) {
    await run(contractorAcceptOperation, contractor, { offer_id: firstOffer });
  } else {
    await run(dispatcherAssignOperation, dispatcher, {
      order_id: first,
      contractor_id: c,
      reason: "the security suite's world",
    });
  }
  const nte = await run(contractorNteRequestOperation, contractor, {
    order_id: first,
    requested_nte_cents: Number(job.nte_cents ?? 0) + 10_000,
    reason: "more pipe than expected",
  });
  await store.webhooks.fanOut(100, h.services.now().toISOString());
  const listed = await run(webhooksDeliveriesOperation, caller, { order_id: first });
  const delivery = listed.deliveries[0]?.delivery_id as string | undefined;
  if (!delivery) throw new Error("the world's orders made no webhook delivery");
  const d = await freshContractor(h, "sandbox");
  const c2 = await freshContractor(h, "sandbox");
  const live = await freshContractor(h, "live");
  await h.services.pool.load();
  const proposal = await run(scheduleOptimizeOperation, dispatcher, {
    date: new Date().toISOString().slice(0, 10),
    time_limit_ms: 50,
  });
  // A period of time off of C (set by C) and one of D (set by the dispatch team).
  const off = await run(contractorTimeOffAddOperation, contractor, contractorTimeOffAddOperation.example);
  const offD = await run(dispatcherTimeOffAddOperation, dispatcher, {
    ...dispatcherTimeOffAddOperation.example,
    contractor_id: d,
  });
  // A scheduled order: booked in the earliest window the pool can serve, moved a week later by the
  // operations that move windows (the same local hours, so the same contractor's hours hold).
  const scheduled = await run(orderOperation, caller, {
    ...job,
    urgency: "scheduled",
    reference_id: `sec-${tag}-scheduled`,
  });
  const booked = scheduled.arrival_window as { start: string; end: string } | null;
  if (!booked) throw new Error(`the world's scheduled order has no window: ${scheduled.order_id}`);
  const week = 7 * 86_400_000;
  const windowed = {
    order: scheduled.order_id as string,
    window: {
      start: new Date(Date.parse(booked.start) + week).toISOString(),
      end: new Date(Date.parse(booked.end) + week).toISOString(),
    },
  };
  // A photo of the first order's job, added by C.
  const photo = await run(attachmentUploadOperation, contractor, { order_id: first });
  // The owner's proof requirements (a setting, named by the seal of the record that set it).
  const requirements = await run(proofRequirementsSetOperation, caller, { photo_required: false });
  // The owner's invoice policy (a setting; a threshold nothing the world invoices is below), and a second
  // key of the owner's account (key_), a requester, whose role an admin key sets.
  const policy = await run(invoicePolicySetOperation, caller, { auto_approve_below_cents: 1 });
  const clerk = await h.services.keys.issue({
    accountName: account,
    mode: "test",
    actor: "operator:test",
    role: "requester",
  });
  // The owner's counter-offer policy (off: counters wait for the account), named by its record's seal.
  const counterPolicy = await run(counterPolicySetOperation, caller, { auto_accept_within_pct: null });
  // The owner's do-not-dispatch entry (dnd_), excluding the other contractor key's C2 by the owner's
  // handle of it; and the owner's handle of C (cref), which it has not excluded.
  const ownerAccount = (await h.services.keys.authenticate(caller)).accountId;
  const excluded = await run(doNotDispatchAddOperation, caller, {
    contractor_ref: h.services.refs.of(ownerAccount, c2),
    reason: "the security suite's world",
  });
  // The first order's tracking link, in force (dispatch.tracking_link_revoke's control revokes it).
  await run(trackingLinkOperation, caller, { order_id: first });
  // The owner's opted-in people (a list named by its record's seal), and a notification (ntf_) of the first
  // order, kept, written through the store as the notifications' worker writes it.
  const people = await run(
    notificationSubscribersSetOperation,
    caller,
    notificationSubscribersSetOperation.example,
  );
  const notification = await seedNotification(h, ownerAccount, first);
  // The owner's site (site_) and an asset at it (ast_), of another serial than the asset example's.
  const site = await run(siteCreateOperation, caller, siteCreateOperation.example);
  const asset = await run(assetCreateOperation, caller, {
    ...assetCreateOperation.example,
    site_id: site.site_id,
    serial: `SEC-${tag}`,
  });
  // The site's request link in force (the QR code's; dispatch.request_link_rotate's control replaces it)
  // and a request pending there (wrq_: the policy holds it; the approval's control makes it an order).
  await run(requestLinkOperation, caller, { site_id: site.site_id });
  const request = await run(requestCreateOperation, caller, {
    ...requestCreateOperation.example,
    site_id: site.site_id,
  });
  // The account's request policy, set (its seal is what the policy's view shows of the owner).
  const requestPolicy = await run(requestPolicySetOperation, caller, { mode: "hold" });
  // The owner's maintenance plan (mpl_) at that site.
  // Weekly on Tuesdays from a fixed date: the occurrence examples' key (2027-01-12, a Tuesday) is one of
  // its dates, and some of its occurrences are always near.
  const plan = await run(planCreateOperation, caller, {
    ...planCreateOperation.example,
    site_id: site.site_id,
    recurrence: "FREQ=WEEKLY;BYDAY=TU",
    starts_on: "2026-01-06",
  });
  // An invoice of the owner's, approved (the invoices' exports read it): an order seeded through the store,
  // invoiced now with a total alone (no version rows: read as one line of kind other).
  const invoiced = orderFixture({
    id: `ord_secinv${tag}`,
    account_id: ownerAccount,
    livemode: false,
    status: "approved",
    contractor_id: c,
    reference_id: `sec-${tag}-invoiced`,
    invoice_cents: 12_000,
    invoiced_at: h.services.now().toISOString(),
  });
  await store.write((tx) => tx.insertOrder(invoiced));
  const ids: Record<Resolved, string> = {
    ord: first,
    ofr: offer,
    nte: nte.request_id,
    ctr: d,
    whe: endpoint.endpoint.endpoint_id,
    whd: delivery,
    prp: proposal.proposal_id,
    off: off.time_off_id,
    att: photo.attachment_id,
    clt: template.template_id,
    cli: template.items[0].item_id,
    dnd: excluded.entry_id,
    key: clerk.id,
    site: site.site_id,
    ast: asset.asset_id,
    mpl: plan.plan_id,
    wrq: request.request_id,
    ntf: notification,
    cref: h.services.refs.of(ownerAccount, c),
  };
  return {
    ids,
    owner: { account: caller, contractor, dispatcher },
    other: {
      account: await h.key(`other-${tag}`, "test"),
      contractor: (await issue(h, "contractor", "test", { contractorId: c2 })).key,
      dispatcher: (await issue(h, "dispatcher", "test", { account: `ops2-${tag}` })).key,
    },
    otherMode: {
      account: await h.key(account, "live"),
      contractor: (await issue(h, "contractor", "live", { contractorId: live })).key,
      dispatcher: (await issue(h, "dispatcher", "live", { account: `ops-${tag}` })).key,
    },
    owned: [
      ...Object.values(ids),
      second,
      c,
      offD.time_off_id,
      windowed.order,
      invoiced.id,
      requirements.record.seal,
      policy.record.seal,
      (await h.services.keys.authenticate(caller)).keyId,
      counterPolicy.record.seal,
      requestPolicy.seal,
      people.seal,
    ],
    orders: [first, second, windowed.order],
    windowed,
  };
}

/** The example reduced to its resource references (a view's filters dropped, so the owner's resources are
 * in the owner's view), when the operation accepts that; else the whole example. */
function viewInput(op: AnyOperation, input: Record<string, unknown>): Record<string, unknown> {
  const example = (op.example ?? {}) as Record<string, unknown>;
  const reduced = Object.fromEntries(
    Object.entries(input).filter(
      ([k]) => referencedPrefixes(example[k]).size > 0 || pathParams(op).includes(k),
    ),
  );
  // A view that must be given a date range (the exports) is asked for the days around the world's.
  if ("from" in example && "to" in example) {
    const day = 86_400_000;
    reduced.from = new Date(Date.now() - day).toISOString().slice(0, 10);
    reduced.to = new Date(Date.now() + day).toISOString().slice(0, 10);
  }
  return op.input.safeParse(reduced).success ? reduced : input;
}

/** The keyed operations of the registry, in its order. */
export function keyedOperations(): AnyOperation[] {
  return OPERATIONS.filter((op) => op.access !== "public");
}

export function runSecuritySuite() {
  const operations = keyedOperations();
  let shared: Harness | undefined;
  let disabled: Harness | undefined;
  const base = async () => {
    shared ??= await createHarness();
    return shared;
  };
  let worldHarness: Harness | undefined;
  const worlds = async () => {
    worldHarness ??= await createHarness();
    return worldHarness;
  };
  const off = async () => {
    disabled ??= await createHarness({ DISPATCH_ENABLED: "false" });
    return disabled;
  };
  const someSandboxContractor = async (h: Harness) =>
    (await h.services.store.contractors.load()).find((c) => c.pool === "sandbox")?.id as string;
  /** A test-mode key of `kind` with its own bucket. */
  const keyOf = async (h: Harness, kind: KeyKind, limits: { ratePerMinute?: number; burst?: number } = {}) =>
    (
      await issue(h, kind, "test", {
        ...limits,
        ...(kind === "contractor" ? { contractorId: await someSandboxContractor(h) } : {}),
      })
    ).key;

  describe("shared security suite: coverage", () => {
    it("covers every keyed operation of the registry, scope tests included unless exempted with a reason", () => {
      const keyed = operations.map((op) => op.id);
      expect(keyed.length).toBeGreaterThan(0);
      const failing = keyedOperations()
        .map((op) => [op.id, undrivable(op)] as const)
        .filter(([id, why]) => why !== null && !(id in SCOPE_EXEMPT))
        .map(([id, why]) => `${id}: ${why}`);
      expect(failing, "operations the suite cannot drive (teach buildWorld, or exempt them)").toEqual([]);
      const stale = Object.keys(SCOPE_EXEMPT).filter(
        (id) =>
          !keyed.includes(id) || undrivable(OPERATIONS.find((op) => op.id === id) as AnyOperation) === null,
      );
      expect(stale, "exemptions for operations that are drivable or not keyed").toEqual([]);
    });
  });

  for (const op of operations) {
    const kind = KIND_OF[op.access as keyof typeof KIND_OF];
    if (!kind) throw new Error(`${op.id} is public: the security suite is for keyed operations`);
    const call = (h: Harness, headers: Record<string, string>, input: unknown = op.example) =>
      callOperation(h, op, input, headers);

    describe(`${op.id} (${op.http.method} ${op.http.path}): shared security suite`, () => {
      it("answers 401 missing_api_key without a key", async () => {
        expectProblem(await call(await base(), {}), 401, "missing_api_key");
      });

      it("answers 401 invalid_api_key for a malformed key", async () => {
        const h = await base();
        expectProblem(await call(h, { "x-api-key": "fsd_live_nope" }), 401, "invalid_api_key");
        expectProblem(await call(h, { "x-api-key": "garbage" }), 401, "invalid_api_key");
      });

      it("answers 401 for a key whose checksum is wrong, before any lookup", async () => {
        const h = await base();
        const key = await keyOf(h, kind);
        const tampered = key.slice(0, 12) + (key[12] === "x" ? "y" : "x") + key.slice(13);
        const keys = h.services.store.keys;
        const original = keys.findByHash.bind(keys);
        let lookups = 0;
        keys.findByHash = (hash: string) => {
          lookups++;
          return original(hash);
        };
        try {
          const body = expectProblem(await call(h, { "x-api-key": tampered }), 401, "invalid_api_key");
          expect(body.detail).toMatch(/checksum/);
          expect(lookups).toBe(0);
        } finally {
          keys.findByHash = original;
        }
      });

      it("answers 401 for a well-formed key that was never issued", async () => {
        const h = await base();
        expectProblem(await call(h, { "x-api-key": generateApiKey("test") }), 401, "invalid_api_key");
        expectProblem(await call(h, { "x-api-key": generateApiKey("live") }), 401, "invalid_api_key");
      });

      it("answers 401 api_key_revoked for a revoked key", async () => {
        const h = await base();
        const issued = await issue(h, kind, "test", {
          ...(kind === "contractor" ? { contractorId: await someSandboxContractor(h) } : {}),
        });
        await h.services.keys.revoke(issued.id, "operator:test");
        expectProblem(await call(h, { "x-api-key": issued.key }), 401, "api_key_revoked");
      });

      it.skipIf(refusedKinds(op, kind).length === 0)(
        `answers 403 key_kind_not_allowed for a key of another kind than ${kind}`,
        async () => {
          const h = await base();
          const others = refusedKinds(op, kind);
          for (const other of others) {
            const body = expectProblem(
              await call(h, { "x-api-key": await keyOf(h, other) }),
              403,
              "key_kind_not_allowed",
            );
            expect(body.detail, other).toMatch(new RegExp(`this is an? ${other} key`));
          }
        },
      );

      it("answers 503 dispatch_not_configured when dispatch is disabled, before checking the key", async () => {
        const h = await off();
        expectProblem(await call(h, {}), 503, "dispatch_not_configured");
        expectProblem(await call(h, { "x-api-key": await keyOf(h, kind) }), 503, "dispatch_not_configured");
      });

      // One token a minute: the bucket does not refill while the test runs, whatever the machine's speed.
      const LIMITS = { ratePerMinute: 1, burst: 5 };

      it("admits the burst, then answers 429 with Retry-After and rate-limit fields", async () => {
        const h = await base();
        const key = await keyOf(h, kind, LIMITS);
        for (let i = 0; i < LIMITS.burst; i++) {
          const res = await call(h, { "x-api-key": key });
          expect(res.statusCode, res.body).not.toBe(429);
          expect(res.statusCode, res.body).toBeLessThan(500);
          expect(res.headers["ratelimit-policy"]).toBe(
            `"per-key";q=${LIMITS.ratePerMinute};w=60;fsd-burst=${LIMITS.burst}`,
          );
          expect(res.headers.ratelimit).toMatch(new RegExp(`^"per-key";r=${LIMITS.burst - 1 - i};t=\\d+$`));
          expect(res.headers["x-ratelimit-limit"]).toBe(String(LIMITS.burst));
          expect(res.headers["x-ratelimit-remaining"]).toBe(String(LIMITS.burst - 1 - i));
        }
        const limited = await call(h, { "x-api-key": key });
        const body = expectProblem(limited, 429, "rate_limited");
        expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        expect(body.retry_after_seconds).toBe(Number(limited.headers["retry-after"]));
        expect(limited.headers.ratelimit).toMatch(/^"per-key";r=0;t=\d+$/);
        expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
      });

      it("checks the key before the limit: a bad key never spends the limit", async () => {
        const h = await base();
        const key = await keyOf(h, kind, LIMITS);
        const remaining = async () => {
          const res = await call(h, { "x-api-key": key });
          expect(res.statusCode, res.body).not.toBe(429);
          return Number(res.headers["x-ratelimit-remaining"]);
        };
        const before = await remaining();
        expect(before).toBe(LIMITS.burst - 1);

        const revoked = await issue(h, kind, "test", {
          ...LIMITS,
          ...(kind === "contractor" ? { contractorId: await someSandboxContractor(h) } : {}),
        });
        await h.services.keys.revoke(revoked.id, "operator:test");
        const wrongKinds = await Promise.all(
          refusedKinds(op, kind).map(async (k) => [k, await keyOf(h, k, LIMITS)] as const),
        );
        const bad: Array<Record<string, string>> = [
          {},
          { "x-api-key": "garbage" },
          { "x-api-key": key.slice(0, 12) + (key[12] === "x" ? "y" : "x") + key.slice(13) },
          { "x-api-key": generateApiKey("test") },
          { "x-api-key": revoked.key },
          ...wrongKinds.map(([, k]) => ({ "x-api-key": k })),
        ];
        const limiter = h.services.limiter;
        const consume = limiter.consume.bind(limiter);
        const spent: string[] = [];
        limiter.consume = (bucket, policy) => {
          spent.push(bucket);
          return consume(bucket, policy);
        };
        try {
          for (const headers of bad) {
            const res = await call(h, headers);
            expect([401, 403], res.body).toContain(res.statusCode);
            expect(res.headers["x-ratelimit-remaining"]).toBeUndefined();
          }
        } finally {
          limiter.consume = consume;
        }
        expect(spent, "limiter buckets spent by bad keys").toEqual([]);
        // The good key's bucket is where it was: one token further for the one call below, no more.
        expect(await remaining()).toBe(before - 1);
        // A key refused for its kind kept its own bucket whole: its first call of its own kind's operation
        // spends its first token.
        for (const [k, wrong] of wrongKinds) {
          const own = keyedOperations().find((o) => KIND_OF[o.access as keyof typeof KIND_OF] === k);
          if (own?.limit !== "key") continue;
          const res = await callOperation(h, own, own.example, { "x-api-key": wrong });
          expect(res.headers["x-ratelimit-remaining"], `${k} key on ${own.id}`).toBe(
            String(LIMITS.burst - 1),
          );
        }
      });

      const why = undrivable(op) ?? SCOPE_EXEMPT[op.id];
      if (why) return; // the coverage test names it
      describe("scope of its resources", () => {
        // A world of its own for each operation (the owner's control may change it), in one harness.
        let world: World | undefined;
        const setup = async () => {
          const h = await worlds();
          world ??= await buildWorld(h);
          return { h, world, input: inputOf(op, world) };
        };
        afterAll(async () => {
          if (!world || !worldHarness) return;
          for (const order_id of world.orders) {
            const res = await callOperation(
              worldHarness,
              dispatcherCancelOperation,
              { order_id, reason: "the security suite is done with this world" },
              { "x-api-key": world.owner.dispatcher },
            );
            expect([200, 409], res.body).toContain(res.statusCode);
          }
        });
        const shape = shapeOf(op);
        const as = (key: string) => ({ "x-api-key": key });

        /** What the owner's view holds: the ids another tenant's view must not. */
        const ownerView = async () => {
          const { h, world, input } = await setup();
          const res = await call(h, as(world.owner[kind]), viewInput(op, input));
          expect(res.statusCode, res.body).toBe(200);
          const ids = idsIn(res.body);
          expect(ids.size, `the owner's view of ${op.id} shows none of its resources`).toBeGreaterThan(0);
          return ids;
        };

        /** A tenant outside the resources' scope: 404 for a target, its own view otherwise. */
        const expectOutside = async (key: string) => {
          const { h, world, input } = await setup();
          if (shape === "target") {
            expectProblem(await call(h, as(key), input), 404, "not_found");
          } else if (shape === "view") {
            const owners = await ownerView();
            const res = await call(h, as(key), viewInput(op, input));
            expect(res.statusCode, res.body).toBe(200);
            const leaked = [...idsIn(res.body)].filter((id) => owners.has(id) || world.owned.includes(id));
            expect(leaked, "resources of another tenant or mode").toEqual([]);
          } else {
            const res = await call(h, as(key), input);
            expect(res.statusCode, res.body).toBe(200);
            const leaked = [...idsIn(res.body)].filter((id) => world.owned.includes(id));
            expect(leaked, "resources of another tenant or mode").toEqual([]);
          }
        };

        if (kind !== "dispatcher") {
          it(
            shape === "target"
              ? `answers 404 to another ${kind}'s key for the owner's resource`
              : `gives another ${kind}'s key its own view, none of the owner's resources`,
            async () => {
              const { world } = await setup();
              await expectOutside(world.other[kind]);
            },
          );
        }

        it(
          shape === "target"
            ? "answers 404 to a live key for a test-mode resource"
            : "gives a live key the live view, none of the test-mode resources",
          async () => {
            const { world } = await setup();
            await expectOutside(world.otherMode[kind]);
          },
        );

        it("reaches the resource with the owner's key (the control: the resource exists and is in scope)", async () => {
          const { h, world, input } = await setup();
          if (shape === "view") {
            await ownerView();
            return;
          }
          const res = await call(h, as(world.owner[kind]), input);
          // 409: found and in scope, in a state this operation cannot move on from (one world serves all).
          expect([200, 409], res.body).toContain(res.statusCode);
        });

        if (kind === "dispatcher") {
          it("reaches every account's resources with another dispatch-team key: its scope is the mode", async () => {
            const { h, world, input } = await setup();
            if (shape === "view") {
              const owners = await ownerView();
              const res = await call(h, as(world.other.dispatcher), viewInput(op, input));
              expect(res.statusCode, res.body).toBe(200);
              expect([...idsIn(res.body)].filter((id) => owners.has(id)).length).toBeGreaterThan(0);
              return;
            }
            const res = await call(h, as(world.other.dispatcher), input);
            expect([200, 409], res.body).toContain(res.statusCode);
          });
        }
      });
    });
  }
}
