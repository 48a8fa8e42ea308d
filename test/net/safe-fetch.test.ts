// The SSRF-safe fetcher: literal addresses refused before any socket, DNS answers checked at connection
// time (rebinding), redirects re-checked per hop, byte caps, deadlines and the process-wide cap.

import type { LookupAddress } from "node:dns";
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseTarget, UrlRefused } from "../../src/net/address-policy.js";
import { type FetcherOptions, SafeFetcher } from "../../src/net/safe-fetch.js";
import { ProbeService } from "../../src/probe/probe.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exemplary, redirectTo, type Storefront, startStorefront, stats } from "../helpers/storefronts.js";

const PUBLIC = "93.184.216.34"; // a public unicast address; tests dial it onto a local fixture

// At least 40 literal forms of loopback, private, link-local, metadata and special addresses.
const REFUSED_LITERALS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://127.0.1/",
  "http://2130706433/",
  "http://0x7f.1/",
  "http://0x7f000001/",
  "http://0x7f.0x0.0x0.0x1/",
  "http://0177.0.0.1/",
  "http://017700000001/",
  "http://127.000.000.001/",
  "http://127.255.255.254/",
  "http://0.0.0.0/",
  "http://0/",
  "http://[::]/",
  "http://[::1]/",
  "http://[0:0:0:0:0:0:0:1]/",
  "http://[::ffff:7f00:1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[0:0:0:0:0:ffff:127.0.0.1]/",
  "http://[::127.0.0.1]/",
  "http://[64:ff9b::7f00:1]/",
  "http://[64:ff9b::a9fe:a9fe]/",
  "http://[2002:7f00:1::]/",
  "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
  "http://10.0.0.1/",
  "http://10.255.255.255/",
  "http://172.16.0.1/",
  "http://172.31.255.255/",
  "http://192.168.1.1/",
  "http://100.64.0.1/",
  "http://100.127.255.254/",
  "http://169.254.169.254/",
  "http://169.254.169.254/latest/meta-data/",
  "http://[::ffff:a9fe:a9fe]/",
  "http://169.254.0.1/",
  "http://[fe80::1]/",
  "http://[fd00::1]/",
  "http://[fc00::1]/",
  "http://[ff02::1]/",
  "http://224.0.0.1/",
  "http://239.255.255.250/",
  "http://255.255.255.255/",
  "http://192.0.2.1/",
  "http://198.51.100.1/",
  "http://203.0.113.1/",
  "http://198.18.0.1/",
  "http://240.0.0.1/",
  "http://192.0.0.1/",
  "http://[2001:db8::1]/",
  "http://[100::1]/",
  "http://[fec0::1]/",
  "https://127.0.0.1/",
  "127.0.0.1",
  "[::1]",
  "http://localhost/",
  "http://shop.localhost/",
  "http://printer.local/",
  "http://intranet/",
  "http://metadata.google.internal/",
];

const OTHER_REFUSALS: Array<[string, string]> = [
  ["ftp://shop.example.com/", "scheme_not_allowed"],
  ["javascript:alert(1)", "unparseable"],
  ["file:///etc/passwd", "scheme_not_allowed"],
  ["http://user:pass@shop.example.com/", "credentials_not_allowed"],
  ["http://shop.example.com:8080/", "port_not_allowed"],
  ["https://shop.example.com:22/", "port_not_allowed"],
  [`https://shop.example.com/${"a".repeat(240)}`, "too_long"],
  ["http://", "unparseable"],
  ["", "unparseable"],
];

describe("URL and address policy", () => {
  const policy = { allowPrivateNetworks: false, extraPorts: new Set<number>() };

  it("reads a bare domain as https://<domain>/ and keeps public URLs", () => {
    expect(parseTarget("shop.example.com", policy).href).toBe("https://shop.example.com/");
    expect(parseTarget("shop.example.com/products?q=1", policy).href).toBe(
      "https://shop.example.com/products?q=1",
    );
    expect(parseTarget("http://93.184.216.34/", policy).href).toBe("http://93.184.216.34/");
    expect(parseTarget("https://[2606:4700::1111]/", policy).hostname).toBe("[2606:4700::1111]");
  });

  it(`refuses ${REFUSED_LITERALS.length} literal forms of non-public hosts`, () => {
    expect(REFUSED_LITERALS.length).toBeGreaterThanOrEqual(40);
    for (const url of REFUSED_LITERALS) {
      expect(() => parseTarget(url, policy), url).toThrow(UrlRefused);
    }
  });

  it("admits private and loopback with allowPrivateNetworks, never link-local or unspecified", () => {
    const open = { allowPrivateNetworks: true, extraPorts: new Set<number>() };
    expect(parseTarget("http://127.0.0.1/", open).hostname).toBe("127.0.0.1");
    expect(parseTarget("http://10.1.2.3/", open).hostname).toBe("10.1.2.3");
    for (const url of [
      "http://169.254.169.254/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://224.0.0.1/",
    ]) {
      expect(() => parseTarget(url, open), url).toThrow(UrlRefused);
    }
  });
});

describe("POST /api/agentic-commerce/probe refusals", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ PROBE_RATE_LIMIT_PER_MINUTE: "100000", PROBE_RATE_LIMIT_BURST: "100000" });
  });
  afterAll(() => h.close());
  afterEach(() => vi.restoreAllMocks());

  it("answers 400 invalid_url for every refused form, naming the field and why, and opens no socket", async () => {
    const connect = vi.spyOn(net.Socket.prototype, "connect");
    for (const url of REFUSED_LITERALS) {
      const res = await h.post("/api/agentic-commerce/probe", { url });
      expect(res.statusCode, url).toBe(400);
      const problem = res.json();
      expect(problem.code).toBe("invalid_url");
      expect(problem.errors[0].field).toBe("url");
      expect(problem.reason).toBe("not_public_host");
    }
    for (const [url, reason] of OTHER_REFUSALS) {
      const res = await h.post("/api/agentic-commerce/probe", { url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().reason, url).toBe(reason);
    }
    expect(connect).not.toHaveBeenCalled();
  });

  it("answers 422 for a body without url", async () => {
    const res = await h.post("/api/agentic-commerce/probe", {});
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].field).toBe("url");
  });
});

describe("probe rate limit", () => {
  it("counts every request per client IP, valid or not, and answers 429 with Retry-After", async () => {
    const h = await createHarness({ PROBE_RATE_LIMIT_PER_MINUTE: "1", PROBE_RATE_LIMIT_BURST: "2" });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<Harness["post"]>> | null = null;
    for (let i = 0; i < 3; i++) {
      last = await h.post("/api/agentic-commerce/probe", { url: "ftp://not-even-valid" });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([400, 400, 429]);
    expect(Number(last?.headers["retry-after"])).toBeGreaterThan(0);
    expect(last?.json().code).toBe("rate_limited");
    // The rest of the public API has its own bucket.
    expect((await h.get("/api/dispatch/index")).statusCode).toBe(200);
    await h.close();
  });
});

describe("SafeFetcher", () => {
  const fronts: Storefront[] = [];
  const fetchers: SafeFetcher[] = [];
  afterAll(async () => {
    await Promise.all(fetchers.map((f) => f.close()));
    await Promise.all(fronts.map((f) => f.close()));
  });

  function fetcher(overrides: Partial<FetcherOptions>): SafeFetcher {
    const f = new SafeFetcher({
      allowPrivateNetworks: false,
      extraPorts: new Set(fronts.map((s) => s.port)),
      timeoutMs: 2_000,
      maxBodyBytes: 1024 * 1024,
      maxRedirects: 5,
      maxConcurrent: 8,
      userAgent: "test",
      ...overrides,
    });
    fetchers.push(f);
    return f;
  }

  async function front(routes: Parameters<typeof startStorefront>[0]): Promise<Storefront> {
    const s = await startStorefront(routes);
    fronts.push(s);
    return s;
  }

  /** Public-looking names for the fixtures: the policy sees PUBLIC, the socket goes to 127.0.0.1. */
  const dial = (address: string) => (address === PUBLIC ? "127.0.0.1" : address);

  it("connects to the address it checked: a resolver answering public, then 127.0.0.1, cannot rebind", async () => {
    const shop = await front(() => ({ type: "text/plain", body: "hello" }));
    let calls = 0;
    const resolver = async (): Promise<LookupAddress[]> => {
      calls++;
      return [{ address: calls === 1 ? PUBLIC : "127.0.0.1", family: 4 }];
    };
    const f = fetcher({ resolver, dialAddress: dial, extraPorts: new Set([shop.port]) });
    const first = await f.fetch(`http://rebind-a.fixture-shop.net:${shop.port}/`);
    expect(first.ok && first.body.toString()).toBe("hello");
    expect(calls).toBe(1); // one answer, checked and used: no second lookup to slip through
    const second = await f.fetch(`http://rebind-b.fixture-shop.net:${shop.port}/`);
    expect(second).toMatchObject({ ok: false, code: "address_refused" });
    expect(shop.hits.get("/")).toBe(1);
  });

  it("refuses a name when any of its addresses is not public", async () => {
    const shop = await front(() => ({ body: "x" }));
    const resolver = async (): Promise<LookupAddress[]> => [
      { address: PUBLIC, family: 4 },
      { address: "10.0.0.5", family: 4 },
    ];
    const f = fetcher({ resolver, dialAddress: dial, extraPorts: new Set([shop.port]) });
    const res = await f.fetch(`http://mixed.fixture-shop.net:${shop.port}/`);
    expect(res).toMatchObject({ ok: false, code: "address_refused" });
    expect(res.ok || res.message).toMatch(/10\.0\.0\.5.*private/);
    expect(shop.connections).toBe(0);
  });

  it("re-checks every redirect: a public storefront redirecting to 127.0.0.1 is not followed", async () => {
    const internal = await front(() => ({ body: "internal admin" }));
    const shop = await front(redirectTo(`http://127.0.0.1:${internal.port}/admin`));
    const f = fetcher({
      resolver: async () => [{ address: PUBLIC, family: 4 }],
      dialAddress: dial,
      extraPorts: new Set([shop.port, internal.port]),
    });
    const res = await f.fetch(`http://shop.fixture-shop.net:${shop.port}/`);
    expect(res).toMatchObject({ ok: false, code: "not_public_host" });
    expect(res.redirects).toEqual([`http://shop.fixture-shop.net:${shop.port}/`]);
    expect(internal.connections).toBe(0);
  });

  it("stops after 5 redirects", async () => {
    let n = 0;
    const loop = await front(() => ({ status: 302, headers: { location: `/hop${++n}` } }));
    const f = fetcher({ allowPrivateNetworks: true, extraPorts: new Set([loop.port]) });
    const res = await f.fetch(`${loop.origin}/`);
    expect(res).toMatchObject({ ok: false, code: "too_many_redirects" });
    expect(res.redirects).toHaveLength(5);
  });

  it("returns a redirect as is when asked not to follow", async () => {
    const shop = await front(redirectTo("https://elsewhere.example/"));
    const f = fetcher({ allowPrivateNetworks: true, extraPorts: new Set([shop.port]) });
    const res = await f.fetch(`${shop.origin}/`, { followRedirects: false });
    expect(res).toMatchObject({ ok: true, status: 302, redirects: [] });
  });

  it("probes a storefront reached by a public name with private networks off, as in production", async () => {
    const shop = await front(exemplary);
    const f = fetcher({
      resolver: async () => [{ address: PUBLIC, family: 4 }],
      dialAddress: dial,
      extraPorts: new Set([shop.port]),
    });
    const service = new ProbeService(f, {
      allowPrivateNetworks: false,
      extraPorts: new Set([shop.port]),
      cacheTtlMs: 60_000,
    });
    const report = await service.probe(`http://acme.fixture-shop.net:${shop.port}/`);
    expect(report.grade).toBe("A");
    expect(report.origin).toBe(`http://acme.fixture-shop.net:${shop.port}`);
  });

  it("never has more than maxConcurrent requests in flight", async () => {
    const slow = await front(() => ({ body: "slow", delayMs: 40 }));
    const f = fetcher({ allowPrivateNetworks: true, maxConcurrent: 3, extraPorts: new Set([slow.port]) });
    stats.peakInFlight = 0;
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => f.fetch(`${slow.origin}/page/${i}`)),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(stats.peakInFlight).toBeLessThanOrEqual(3);
    expect(f.peakInFlight).toBe(3);
  });
});
