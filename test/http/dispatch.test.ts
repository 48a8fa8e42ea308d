import { beforeAll, describe, expect, it, vi } from "vitest";
import { quoteOutput } from "../../src/operations/matching/quote.js";
import { orderSchema } from "../../src/operations/orders/order-view.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import {
  createHarness,
  ESTIMATE_PATH,
  type Harness,
  ORDER_PATH,
  QUOTE_PATH,
  validOrder,
  validQuote,
} from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

let h: Harness;
let liveKey: string;
let otherLiveKey: string;
let testKey: string;

beforeAll(async () => {
  h = await createHarness();
  await h.services.store.contractors.insert([liveContractor()], testRecord());
  await h.services.pool.load();
  liveKey = await h.key("acme", "live");
  otherLiveKey = await h.key("globex", "live");
  testKey = await h.key("acme", "test");
});

describe("POST /api/dispatch/v1/quote", () => {
  it("prices the job and matches a sandbox contractor for a test key", async () => {
    const res = await h.post(QUOTE_PATH, validQuote(), { "x-api-key": testKey });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const body = quoteOutput.parse(res.json());
    expect(body.quote_id).toMatch(/^qte_/);
    expect(body.livemode).toBe(false);
    expect(body.contractor_ref).toMatch(/^cref-[0-9A-Za-z]{22}$/);
    expect(body.availability).toBe("available");
    expect(body.currency).toBe("USD");
    expect(body.valid_for_minutes).toBe(60);
    expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBe(60 * 60_000);
    expect(body.estimated_cost_cents).toBe(body.price_breakdown.total_cents);
    expect(body.price_breakdown.pricing_basis).toBe("contractor_rate");
    expect(body.price_breakdown.urgency_multiplier).toBe(1.35);
  });

  it("never reveals a contractor's name or contact", async () => {
    const res = await h.post(
      QUOTE_PATH,
      validQuote({ trade: "hvac", location: { state: "CA", zip: "94103" } }),
      {
        "x-api-key": liveKey,
      },
    );
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/Secret Plumbing|secret-plumbing|555-0100/);
    expect(res.json().price_breakdown.hourly_rate_cents).toBe(12_000);
  });

  it("answers 200 with the model price when no live contractor is eligible", async () => {
    const res = await h.post(QUOTE_PATH, validQuote({ trade: "roofing" }), { "x-api-key": liveKey });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.contractor_ref).toBeNull();
    expect(body.availability).toBe("no_contractor_available");
    expect(body.price_breakdown.pricing_basis).toBe("model_rate");
    expect(body.estimated_cost_cents).toBeGreaterThan(0);
  });

  it("matches trade codes case-insensitively and normalises state to upper case", async () => {
    const res = await h.post(
      QUOTE_PATH,
      { trade: " HVAC ", location: { state: "ca" } },
      { "x-api-key": testKey },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().trade).toBe("hvac");
    expect(res.json().state).toBe("CA");
    expect(res.json().urgency).toBe("routine");
  });

  it("answers 422 listing the accepted codes for an unknown trade", async () => {
    const body = expectProblem(
      await h.post(QUOTE_PATH, validQuote({ trade: "carpentry" }), { "x-api-key": testKey }),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual([
      { field: "trade", message: expect.stringContaining("plumbing, electrical, hvac") },
    ]);
  });

  it.each(["ZZ", "XX", "U1"])(
    "answers 422 for state %s, which is no US state or territory",
    async (state) => {
      const body = expectProblem(
        await h.post(QUOTE_PATH, validQuote({ location: { state } }), { "x-api-key": testKey }),
        422,
        "validation_failed",
      );
      expect(body.errors[0].field).toBe("location.state");
    },
  );

  it("answers 422 when a known ZIP is in another state", async () => {
    const body = expectProblem(
      await h.post(QUOTE_PATH, validQuote({ location: { state: "CA", zip: "10001" } }), {
        "x-api-key": testKey,
      }),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual([{ field: "location.zip", message: "ZIP 10001 is in NY, not CA" }]);
  });

  it.each(["00000", "99999", "00000-0000"])(
    "answers 422 on location.zip for ZIP %s, which exists nowhere: quote, order, estimate and availability",
    async (zip) => {
      const location = { state: "TX", zip };
      const calls: Array<[string, object]> = [
        [QUOTE_PATH, validQuote({ location })],
        [ORDER_PATH, validOrder({ location })],
        [ESTIMATE_PATH, { trade: "plumbing", location }],
        [
          "/api/dispatch/v1/availability",
          { trade: "plumbing", location, start_date: "2030-06-04", end_date: "2030-06-05" },
        ],
      ];
      for (const [path, body] of calls) {
        const problem = expectProblem(
          await h.post(path, body, { "x-api-key": testKey }),
          422,
          "validation_failed",
        );
        expect(problem.errors, path).toEqual([
          {
            field: "location.zip",
            message: `ZIP ${zip} is not a known US ZIP code: give the site's ZIP code, or leave zip out and give the city`,
            code: "zip_unknown",
          },
        ]);
      }
    },
  );

  it("answers 422 naming every offending field at once", async () => {
    const body = expectProblem(
      await h.post(
        QUOTE_PATH,
        { trade: "plumbing", location: { state: "T" }, urgency: "asap", nte_cents: 0, extra: true },
        { "x-api-key": testKey },
      ),
      422,
      "validation_failed",
    );
    expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ["extra", "location.state", "nte_cents", "urgency"].sort(),
    );
  });

  it("flags whether the estimate is within the NTE", async () => {
    const low = await h.post(QUOTE_PATH, validQuote({ nte_cents: 1 }), { "x-api-key": testKey });
    expect(low.json().within_nte).toBe(false);
    const high = await h.post(QUOTE_PATH, validQuote({ nte_cents: 10_000_000 }), { "x-api-key": testKey });
    expect(high.json().within_nte).toBe(true);
  });
});

describe("POST /api/dispatch/v1/order and GET its status_url", () => {
  it("creates a durable order matched to a contractor, readable at its status_url", async () => {
    const res = await h.post(ORDER_PATH, validOrder({ reference_id: "PO-1" }), { "x-api-key": liveKey });
    expect(res.statusCode, res.body).toBe(200);
    const order = orderSchema.parse(res.json());
    expect(order.order_id).toMatch(/^ord_/);
    expect(order.status).toBe("offered");
    expect(order.contractor_ref).toMatch(/^cref-[0-9A-Za-z]{22}$/);
    expect(order.livemode).toBe(true);
    expect(order.reference_id).toBe("PO-1");
    expect(order.location.address).toBe("1 Market St");
    expect(order.status_url).toBe(`http://localhost:80/api/dispatch/v1/orders/${order.order_id}`);
    expect(res.body).not.toMatch(/Secret Plumbing/);

    const path = new URL(order.status_url).pathname;
    const read = await h.get(path, { "x-api-key": liveKey });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(order);
  });

  it("still creates the order, awaiting a dispatcher, when nobody is eligible", async () => {
    const res = await h.post(ORDER_PATH, validOrder({ trade: "locksmith" }), { "x-api-key": liveKey });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe("needs_dispatcher");
    expect(res.json().contractor_ref).toBeNull();
  });

  it("hides orders from other accounts and across modes (404)", async () => {
    const live = (await h.post(ORDER_PATH, validOrder(), { "x-api-key": liveKey })).json();
    const sandbox = (await h.post(ORDER_PATH, validOrder(), { "x-api-key": testKey })).json();
    expect(sandbox.livemode).toBe(false);
    const livePath = `/api/dispatch/v1/orders/${live.order_id}`;
    const sandboxPath = `/api/dispatch/v1/orders/${sandbox.order_id}`;
    expectProblem(await h.get(livePath, { "x-api-key": otherLiveKey }), 404, "not_found");
    expectProblem(await h.get(livePath, { "x-api-key": testKey }), 404, "not_found");
    expectProblem(await h.get(sandboxPath, { "x-api-key": liveKey }), 404, "not_found");
    expect((await h.get(sandboxPath, { "x-api-key": testKey })).statusCode).toBe(200);
  });

  it("uses PUBLIC_BASE_URL for status_url when configured", async () => {
    const other = await createHarness({ PUBLIC_BASE_URL: "https://dispatch.example.com/" });
    const res = await other.post(ORDER_PATH, validOrder(), { "x-api-key": other.sandboxKey });
    expect(res.json().status_url).toMatch(
      /^https:\/\/dispatch\.example\.com\/api\/dispatch\/v1\/orders\/ord_/,
    );
    await other.close();
  });

  it("requires a non-blank description", async () => {
    const body = expectProblem(
      await h.post(ORDER_PATH, validOrder({ description: "   " }), { "x-api-key": testKey }),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual([{ field: "description", message: "description must not be blank" }]);
  });

  it("rejects a callback_url that is not an absolute http(s) URL", async () => {
    for (const url of ["not a url", "ftp://example.com/x", "javascript:alert(1)"]) {
      const res = await h.post(ORDER_PATH, validOrder({ callback_url: url }), { "x-api-key": testKey });
      expect(expectProblem(res, 422, "validation_failed").errors[0].field).toBe("callback_url");
    }
  });

  it("rejects a callback_url that could never be delivered: not https when live, or a non-public host", async () => {
    const refused: Array<[string, string, RegExp]> = [
      [liveKey, "http://hooks.acme-facilities.net/dispatch", /https for live orders/],
      [testKey, "http://127.0.0.1:8080/hook", /not allowed|not a public address/],
      [testKey, "https://169.254.169.254/latest/meta-data", /not a public address \(linkLocal\)/],
      [testKey, "https://[::1]/hook", /not a public address/],
      [testKey, "https://intranet/hook", /not a public domain name/],
      [testKey, "https://build.local/hook", /special-use name/],
      [testKey, "https://user:pw@hooks.acme-facilities.net/x", /user name or password/],
    ];
    for (const [key, url, message] of refused) {
      const res = await h.post(ORDER_PATH, validOrder({ callback_url: url }), { "x-api-key": key });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(problem.errors[0].field, url).toBe("callback_url");
      expect(problem.errors[0].message, url).toMatch(message);
    }
    // A sandbox order may call back over plain http, to a public host.
    const ok = await h.post(ORDER_PATH, validOrder({ callback_url: "http://hooks.acme-facilities.net/x" }), {
      "x-api-key": testKey,
    });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

describe("pool changes and store failures", () => {
  it("picks up contractors imported while running, on the next refresh", async () => {
    const fresh = await createHarness();
    const key = await fresh.key("acme", "live");
    const job = { trade: "roofing", location: { state: "OR", zip: "97201" } };
    expect((await fresh.post(QUOTE_PATH, job, { "x-api-key": key })).json().contractor_ref).toBeNull();
    expect(await fresh.services.pool.refresh()).toBe(false);
    await fresh.services.store.contractors.upsert(
      [
        liveContractor({
          id: "ctr_roofer1",
          externalRef: "R-1",
          trades: ["roofing"],
          states: ["OR"],
          lat: 45.5,
          lon: -122.67,
        }),
      ],
      () => testRecord(),
    );
    expect(await fresh.services.pool.refresh()).toBe(true);
    expect((await fresh.post(QUOTE_PATH, job, { "x-api-key": key })).json().contractor_ref).toBe(
      await fresh.refOf(key, "ctr_roofer1"),
    );
    await fresh.close();
  });

  it("answers 503 service_unavailable with Retry-After when the store is busy, and writes nothing", async () => {
    const fresh = await createHarness();
    const write = fresh.services.store.write.bind(fresh.services.store);
    fresh.services.store.write = async () => {
      throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    };
    const res = await fresh.post(ORDER_PATH, validOrder(), {
      "x-api-key": fresh.sandboxKey,
      "idempotency-key": "busy-1",
    });
    expectProblem(res, 503, "service_unavailable");
    expect(res.headers["retry-after"]).toBe("1");
    fresh.services.store.write = write;
    // The idempotency key was not consumed: the retry goes through.
    const retry = await fresh.post(ORDER_PATH, validOrder(), {
      "x-api-key": fresh.sandboxKey,
      "idempotency-key": "busy-1",
    });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    await fresh.close();
  });
});

describe("Idempotency-Key on POST order", () => {
  it("replays the first response for the same key and body", async () => {
    const headers = { "x-api-key": testKey, "idempotency-key": "retry-1" };
    const first = await h.post(ORDER_PATH, validOrder(), headers);
    const second = await h.post(ORDER_PATH, validOrder(), headers);
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(second.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("treats a reordered but equal body as the same request", async () => {
    const headers = { "x-api-key": testKey, "idempotency-key": "retry-order" };
    const body = validOrder();
    const first = await h.post(ORDER_PATH, body, headers);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await h.post(ORDER_PATH, reordered, headers);
    expect(second.json().order_id).toBe(first.json().order_id);
  });

  it("answers 422 for the same key with a different body", async () => {
    const headers = { "x-api-key": testKey, "idempotency-key": "retry-2" };
    await h.post(ORDER_PATH, validOrder(), headers);
    expectProblem(
      await h.post(ORDER_PATH, validOrder({ description: "Different job" }), headers),
      422,
      "idempotency_key_reused",
    );
  });

  it("answers 409 to a retry while the first request is still running, and creates one order", async () => {
    const headers = { "x-api-key": testKey, "idempotency-key": "retry-3" };
    // The first request is held at its write until the retry has been answered, so the retry always
    // arrives while the first is still running (however the two are scheduled).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store = h.services.store;
    const write = store.write.bind(store);
    const spy = vi.spyOn(store, "write").mockImplementationOnce(async (work) => {
      await held;
      return write(work);
    });
    try {
      const first = h.post(ORDER_PATH, validOrder(), headers);
      await vi.waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
      const retry = await h.post(ORDER_PATH, validOrder(), headers);
      expectProblem(retry, 409, "idempotency_request_in_progress");
      release();
      const answered = await first;
      expect(answered.statusCode).toBe(200);
      // Once the first has finished, the same retry replays its answer.
      const replayed = await h.post(ORDER_PATH, validOrder(), headers);
      expect(replayed.statusCode).toBe(200);
      expect(replayed.json().order_id).toBe(answered.json().order_id);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  it("scopes keys per account: another account may reuse the same key", async () => {
    const otherTest = await h.key("globex", "test");
    const a = await h.post(ORDER_PATH, validOrder(), { "x-api-key": testKey, "idempotency-key": "shared" });
    const b = await h.post(ORDER_PATH, validOrder(), { "x-api-key": otherTest, "idempotency-key": "shared" });
    expect(a.json().order_id).not.toBe(b.json().order_id);
  });

  it("rejects an over-long Idempotency-Key", async () => {
    const res = await h.post(ORDER_PATH, validOrder(), {
      "x-api-key": testKey,
      "idempotency-key": "k".repeat(256),
    });
    expect(expectProblem(res, 400, "invalid_request").errors[0].field).toBe("Idempotency-Key");
  });

  it("does not replay an expired key: after 24 h the key starts a new order", async () => {
    const headers = { "x-api-key": testKey, "idempotency-key": "retry-expired" };
    const first = (await h.post(ORDER_PATH, validOrder(), headers)).json();
    const realNow = h.services.now;
    h.services.now = () => new Date(Date.now() + 24 * 60 * 60 * 1000 + 1000);
    try {
      const again = (await h.post(ORDER_PATH, validOrder(), headers)).json();
      expect(again.order_id).not.toBe(first.order_id);
    } finally {
      h.services.now = realNow;
    }
  });
});

describe("capacity under concurrency", () => {
  it("never assigns a contractor more jobs than its capacity, even for concurrent orders", async () => {
    const fresh = await createHarness();
    await fresh.services.store.contractors.insert(
      [
        liveContractor({ id: "ctr_cap1", trades: ["plumbing"], maxActiveJobs: 3 }),
        liveContractor({ id: "ctr_cap2", trades: ["plumbing"], maxActiveJobs: 2 }),
      ],
      testRecord(),
    );
    await fresh.services.pool.load();
    const key = await fresh.key("busy", "live", { ratePerMinute: 10_000, burst: 10_000 });
    const body = { trade: "plumbing", location: { state: "CA", zip: "94103" }, description: "Leak" };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fresh.post(ORDER_PATH, body, { "x-api-key": key })),
    );
    const refs = results.map((r) => r.json().contractor_ref);
    const [cap1, cap2] = [await fresh.refOf(key, "ctr_cap1"), await fresh.refOf(key, "ctr_cap2")];
    expect(refs.filter((r) => r === cap1)).toHaveLength(3);
    expect(refs.filter((r) => r === cap2)).toHaveLength(2);
    expect(refs.filter((r) => r === null)).toHaveLength(15);
    // A restart counts the same jobs from the store.
    await fresh.services.pool.load();
    expect(fresh.services.pool.index.jobsOf("ctr_cap1")).toBe(3);
    await fresh.close();
  });

  it("gives the capacity back when the order cannot be written", async () => {
    const fresh = await createHarness();
    await fresh.services.store.contractors.insert(
      [liveContractor({ id: "ctr_one", maxActiveJobs: 1 })],
      testRecord(),
    );
    await fresh.services.pool.load();
    const key = await fresh.key("acme", "live");
    const write = fresh.services.store.write.bind(fresh.services.store);
    fresh.services.store.write = async () => {
      throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
    };
    expect((await fresh.post(ORDER_PATH, validOrder(), { "x-api-key": key })).statusCode).toBe(503);
    fresh.services.store.write = write;
    expect((await fresh.post(ORDER_PATH, validOrder(), { "x-api-key": key })).json().contractor_ref).toBe(
      await fresh.refOf(key, "ctr_one"),
    );
    await fresh.close();
  });
});
