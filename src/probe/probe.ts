// The agentic-commerce readiness probe: fetches a storefront the way a shopping agent would and scores
// what it finds (weights in scoring.ts). A report is a snapshot of that moment, kept 10 minutes per origin:
// the same origin probed again within that time gets the same snapshot, marked cached; probes of an
// origin already running share that run.

import { parseTarget, UrlRefused } from "../net/address-policy.js";
import type { SafeFetcher } from "../net/safe-fetch.js";
import { checkLlmsFullTxt, checkLlmsTxt, checkSitemap } from "./maps.js";
import { checkProductSchema } from "./product-schema.js";
import { checkAcp, checkAgentSurfaces, checkUcp } from "./protocols.js";
import { checkRobotsAgents, checkRobotsSitemapLine, readRobots } from "./robots.js";
import { type CheckResult, grade } from "./scoring.js";
import { Site } from "./site.js";

const PROBE_NOTICE =
  "A snapshot of what an AI agent could read from this storefront when it was taken: not an attested " +
  "grade, not a certification, and not a merchant endpoint. Nothing was bought or submitted.";

export interface ProbeReport {
  url: string;
  origin: string;
  grade: "A" | "B" | "C" | "D" | "F";
  score: number;
  max_score: 100;
  checks: CheckResult[];
  snapshot: {
    taken_at: string;
    duration_ms: number;
    cached: boolean;
    /** Until when this origin's snapshot is served from cache. */
    fresh_until: string;
    fetches: number;
  };
  notice: string;
}

const CACHE_MAX = 1_000;
/** How long an origin's snapshot is served again. */
export const PROBE_CACHE_TTL_MS = 10 * 60_000;

export class ProbeService {
  private readonly cache = new Map<string, ProbeReport>();
  private readonly running = new Map<string, Promise<ProbeReport>>();

  constructor(
    private readonly fetcher: SafeFetcher,
    private readonly options: {
      allowPrivateNetworks: boolean;
      extraPorts: ReadonlySet<number>;
      cacheTtlMs: number;
      now?: () => Date;
    },
  ) {}

  /** Probes `input` (a URL or a bare domain). Throws UrlRefused for a URL that may not be fetched. */
  async probe(input: string): Promise<ProbeReport> {
    const target = parseTarget(input, this.options);
    const key = target.origin;
    const now = (this.options.now ?? (() => new Date()))();
    const cached = this.cache.get(key);
    if (cached && Date.parse(cached.snapshot.fresh_until) > now.getTime()) {
      return { ...cached, snapshot: { ...cached.snapshot, cached: true } };
    }
    let run = this.running.get(key);
    if (!run) {
      run = this.run(target, now).finally(() => this.running.delete(key));
      this.running.set(key, run);
    }
    const report = await run;
    if (this.cache.size >= CACHE_MAX) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.delete(key);
    this.cache.set(key, report);
    return report;
  }

  private async run(target: URL, takenAt: Date): Promise<ProbeReport> {
    const started = performance.now();
    const site = new Site(this.fetcher, new URL(target.origin));
    const home = await site.get(target.href);
    if (!home.ok && home.redirects.length === 0) {
      // The URL itself cannot be reached as a public host: that is the caller's URL, not the store's score.
      if (home.code === "address_refused")
        throw new UrlRefused("not_public_host", `url host ${target.hostname}: ${home.message}.`);
      if (home.code === "dns_failed")
        throw new UrlRefused("unresolvable_host", `url host ${target.hostname} does not resolve.`);
    }
    // The checks run against the origin the home page settled on (example.com -> www.example.com).
    const origin = new URL(home.ok ? home.url : target.href);
    site.origin = new URL(origin.origin);

    const robotsPromise = site.get("/robots.txt").then(readRobots);
    const independent = Promise.all([
      checkAcp(site),
      checkUcp(site),
      checkAgentSurfaces(site),
      checkLlmsTxt(site),
      checkLlmsFullTxt(site),
    ]);
    const robots = await robotsPromise;
    const { check: sitemap, productUrl } = await checkSitemap(
      site,
      robots.kind === "rules" ? robots.sitemaps : [],
    );
    const homeUrl = home.ok ? home.url : target.href;
    const [productHome, productPage] = await Promise.all([
      checkProductSchema(site, "product_schema_home", target.href, "The home page could not be fetched."),
      checkProductSchema(
        site,
        "product_schema_product_page",
        productUrl,
        "No product page was found: the sitemap lists none.",
      ),
    ]);
    const [acp, ucp, surfaces, llms, llmsFull] = await independent;
    const checks = [
      acp,
      ucp,
      surfaces,
      productHome,
      productPage,
      checkRobotsAgents(robots, homeUrl, productUrl),
      checkRobotsSitemapLine(robots),
      sitemap,
      llms,
      llmsFull,
    ];
    const score = checks.reduce((sum, c) => sum + c.points, 0);
    return {
      url: target.href,
      origin: origin.origin,
      grade: grade(score),
      score,
      max_score: 100,
      checks,
      snapshot: {
        taken_at: takenAt.toISOString(),
        duration_ms: Math.round(performance.now() - started),
        cached: false,
        fresh_until: new Date(takenAt.getTime() + this.options.cacheTtlMs).toISOString(),
        fetches: site.requests,
      },
      notice: PROBE_NOTICE,
    };
  }
}
