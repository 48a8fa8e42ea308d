// The readiness probe end to end through the HTTP API, against fixture storefronts on 127.0.0.1
// (PROBE_ALLOW_PRIVATE_NETWORKS=true, their ports allowed by PROBE_ALLOWED_PORTS).

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import {
  compressionBomb,
  empty,
  exemplary,
  hugeBody,
  neverAnswers,
  partial,
  redirectTo,
  type Storefront,
  softNotFound,
  startStorefront,
} from "../helpers/storefronts.js";

const PROBE = "/api/agentic-commerce/probe";

type Report = {
  grade: string;
  score: number;
  origin: string;
  checks: Array<{
    id: string;
    status: string;
    points: number;
    max_points: number;
    found: { url: string | null; detail: string };
    fix: string | null;
    details?: Record<string, unknown>;
  }>;
  snapshot: { cached: boolean; taken_at: string; duration_ms: number; fetches: number };
  notice: string;
};

const fronts: Record<string, Storefront> = {};
let h: Harness;

beforeAll(async () => {
  const kinds = { exemplary, empty, partial, softNotFound, hugeBody, compressionBomb, neverAnswers };
  for (const [name, routes] of Object.entries(kinds)) fronts[name] = await startStorefront(routes);
  fronts.redirectMetadata = await startStorefront(redirectTo("http://169.254.169.254/latest/meta-data/"));
  h = await createHarness({
    PROBE_ALLOW_PRIVATE_NETWORKS: "true",
    PROBE_ALLOWED_PORTS: Object.values(fronts)
      .map((f) => f.port)
      .join(","),
    // Generous: the byte caps must be what stops the 10 MiB body and the bomb, even on a loaded machine.
    PROBE_TIMEOUT_MS: "10000",
    PROBE_RATE_LIMIT_PER_MINUTE: "1000",
    PROBE_RATE_LIMIT_BURST: "1000",
  });
});

afterAll(async () => {
  await h?.close();
  await Promise.all(Object.values(fronts).map((f) => f.close()));
});

async function probe(url: string): Promise<Report> {
  const res = await h.post(PROBE, { url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Report;
}

const check = (r: Report, id: string) => {
  const c = r.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id}`);
  return c;
};

describe("readiness probe", () => {
  it("grades the exemplary storefront A, every check passing, with what it fetched", async () => {
    const r = await probe(`${fronts.exemplary?.origin}/`);
    expect(r.grade).toBe("A");
    expect(r.score).toBe(100);
    for (const c of r.checks) {
      expect(c.status, `${c.id}: ${c.found.detail}`).toBe("pass");
      expect(c.points).toBe(c.max_points);
      expect(c.fix).toBeNull();
      expect(c.found.detail.length).toBeGreaterThan(0);
    }
    expect(check(r, "product_schema_product_page").found.url).toBe(
      `${fronts.exemplary?.origin}/products/brass-faucet`,
    );
    const robots = check(r, "robots_ai_agents").details as {
      training_crawlers: Array<{ token: string; home: boolean }>;
    };
    expect(robots.training_crawlers.find((t) => t.token === "GPTBot")?.home).toBe(false); // reported, not scored
    expect(r.notice).toMatch(/snapshot/);
    expect(r.notice).toMatch(/not an attested grade/);
    expect(r.snapshot.cached).toBe(false);
    expect(r.checks.reduce((s, c) => s + c.max_points, 0)).toBe(100);
  });

  it("serves the same origin's snapshot from cache within 10 minutes, marked cached", async () => {
    const first = await probe(`${fronts.exemplary?.origin}/`);
    const hitsBefore = fronts.exemplary?.hits.get("/robots.txt");
    const again = await probe(`${fronts.exemplary?.origin}/some/other/page`);
    expect(again.snapshot.cached).toBe(true);
    expect(again.snapshot.taken_at).toBe(first.snapshot.taken_at);
    expect(fronts.exemplary?.hits.get("/robots.txt")).toBe(hitsBefore);
  });

  it("grades an empty storefront F with a fix for every check", async () => {
    const r = await probe(`${fronts.empty?.origin}/`);
    expect(r.grade).toBe("F");
    expect(r.checks.filter((c) => c.id !== "robots_ai_agents").every((c) => c.status === "fail")).toBe(true);
    // No robots.txt (404) means nothing is disallowed (RFC 9309).
    expect(check(r, "robots_ai_agents").status).toBe("pass");
    for (const c of r.checks.filter((x) => x.status !== "pass")) expect(c.fix).toBeTruthy();
  });

  it("counts an HTML page answered for every path as absent documents", async () => {
    const r = await probe(`${fronts.softNotFound?.origin}/`);
    for (const id of [
      "acp_discovery",
      "ucp_profile",
      "agent_surfaces",
      "llms_txt",
      "llms_full_txt",
      "sitemap",
    ]) {
      expect(check(r, id).status, id).toBe("fail");
    }
    expect(check(r, "acp_discovery").found.detail).toMatch(/HTML/);
    expect(r.grade).toBe("F");
  });

  it("scores a partial storefront check by check", async () => {
    const r = await probe(`${fronts.partial?.origin}/`);
    expect(check(r, "acp_discovery")).toMatchObject({ status: "warn" }); // valid, no cache lifetime
    expect(check(r, "acp_discovery").found.detail).toMatch(/Cache-Control/);
    expect(check(r, "ucp_profile")).toMatchObject({ status: "fail" });
    expect(check(r, "ucp_profile").found.detail).toMatch(/redirect/);
    expect(check(r, "agent_surfaces")).toMatchObject({ status: "warn" });
    expect(check(r, "product_schema_home")).toMatchObject({ status: "fail" });
    const product = check(r, "product_schema_product_page");
    expect(product).toMatchObject({ status: "warn" });
    expect(product.found.url).toMatch(/\/shop\/items\/lamp$/);
    expect(product.found.detail).toMatch(/identifier/);
    expect(product.found.detail).toMatch(/brand/);
    const robots = check(r, "robots_ai_agents");
    expect(robots.status).toBe("warn");
    expect(robots.found.detail).toMatch(/product page: Claude-User, PerplexityBot/);
    expect(check(r, "robots_sitemap_line").status).toBe("fail");
    expect(check(r, "sitemap")).toMatchObject({ status: "pass" }); // found at /sitemap.xml, an index
    expect(check(r, "llms_txt")).toMatchObject({ status: "warn" });
    expect(check(r, "llms_full_txt")).toMatchObject({ status: "fail" });
    const expected = r.checks.reduce((s, c) => s + c.points, 0);
    expect(r.score).toBe(expected);
    const grades: Array<[number, string]> = [
      [90, "A"],
      [80, "B"],
      [70, "C"],
      [60, "D"],
      [0, "F"],
    ];
    expect(r.grade).toBe(grades.find(([min]) => expected >= min)?.[1]);
  });

  it("never follows a redirect to the cloud metadata address", async () => {
    const r = await probe(`${fronts.redirectMetadata?.origin}/`);
    const home = check(r, "product_schema_home");
    expect(home.status).toBe("fail");
    expect(home.found.detail).toMatch(/169\.254\.169\.254.*linkLocal|not a public address/);
  });

  it("stops reading a 10 MiB body and a compression bomb at the byte cap", async () => {
    const huge = await probe(`${fronts.hugeBody?.origin}/`);
    expect(check(huge, "product_schema_home").found.detail).toMatch(/over \d+ bytes/);
    const bomb = await probe(`${fronts.compressionBomb?.origin}/`);
    expect(check(bomb, "product_schema_home").found.detail).toMatch(/over \d+ bytes/);
  }, 60_000);

  it("gives up on a server that never answers, at the deadline", async () => {
    const front = fronts.neverAnswers as Storefront;
    const quick = await createHarness({
      PROBE_ALLOW_PRIVATE_NETWORKS: "true",
      PROBE_ALLOWED_PORTS: String(front.port),
      PROBE_TIMEOUT_MS: "800",
    });
    const res = await quick.post(PROBE, { url: `${front.origin}/` });
    expect(res.statusCode).toBe(200);
    const silent = res.json() as Report;
    expect(check(silent, "product_schema_home").found.detail).toMatch(/deadline/);
    expect(silent.grade).toBe("F");
    // Each URL the probe reads was asked for once (no retry spends another deadline), and each request was
    // given up at its deadline: none is left waiting on the server, which notices an abandoned request when
    // its socket closes, just after the probe answered.
    expect(front.hits.get("/")).toBe(1);
    expect([...front.hits.values()].every((n) => n === 1)).toBe(true);
    await vi.waitFor(() => expect(front.open).toBe(0), { timeout: 10_000, interval: 20 });
    await quick.close();
  }, 30_000);
});
