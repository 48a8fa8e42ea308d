// robots.txt as RFC 9309 has it (parsed by robots-parser): may the AI search and user-triggered agents
// fetch the home page and a product page? Training-only crawlers are reported, not scored: blocking
// them is a publisher's choice that costs a storefront nothing with shopping agents.
//
// Fetch outcomes follow RFC 9309 section 2.3.1: a 4xx means no rules (everything allowed); a 5xx or no
// answer at all means everything is disallowed.

import { createRequire } from "node:module";
import type { FetchResult } from "../net/safe-fetch.js";
import { type CheckResult, result } from "./scoring.js";
import { asDocument } from "./site.js";

interface RobotsRules {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getSitemaps(): string[];
}

// robots-parser is CommonJS (module.exports = function); its typings declare an ES default export that
// NodeNext resolution does not map onto it, so it is required as what it is.
const robotsParser = createRequire(import.meta.url)("robots-parser") as (
  url: string,
  contents: string,
) => RobotsRules;

/** Agents that fetch on a user's behalf or for AI answers (scored). Bare product tokens, as RFC 9309 matches. */
const AI_AGENTS = [
  { token: "OAI-SearchBot", vendor: "OpenAI", role: "search" },
  { token: "ChatGPT-User", vendor: "OpenAI", role: "user_triggered" },
  { token: "Claude-SearchBot", vendor: "Anthropic", role: "search" },
  { token: "Claude-User", vendor: "Anthropic", role: "user_triggered" },
  { token: "PerplexityBot", vendor: "Perplexity", role: "search" },
  { token: "Perplexity-User", vendor: "Perplexity", role: "user_triggered" },
  { token: "DuckAssistBot", vendor: "DuckDuckGo", role: "search" },
  { token: "MistralAI-User", vendor: "Mistral", role: "user_triggered" },
] as const;

/** Crawlers (or opt-out tokens) for model training only: reported, not scored. */
const TRAINING_CRAWLERS = [
  "GPTBot",
  "ClaudeBot",
  "Google-Extended",
  "Applebot-Extended",
  "CCBot",
  "meta-externalagent",
  "Bytespider",
] as const;

export type Robots =
  | { kind: "rules"; url: string; status: number; parser: RobotsRules; sitemaps: string[] }
  | { kind: "allow_all"; url: string; status: number | null; why: string }
  | { kind: "disallow_all"; url: string; status: number | null; why: string };

export function readRobots(fetched: FetchResult): Robots {
  if (!fetched.ok) {
    return { kind: "disallow_all", url: fetched.url, status: null, why: `unreachable (${fetched.message})` };
  }
  if (fetched.status >= 500) {
    return {
      kind: "disallow_all",
      url: fetched.url,
      status: fetched.status,
      why: `answered HTTP ${fetched.status}`,
    };
  }
  const doc = asDocument(fetched);
  if (!doc.present) return { kind: "allow_all", url: doc.url, status: doc.status, why: doc.why };
  const parser = robotsParser(doc.url, doc.text);
  const sitemaps = parser
    .getSitemaps()
    .map((s) => {
      try {
        return new URL(s, doc.url).href;
      } catch {
        return null;
      }
    })
    .filter((s): s is string => s !== null);
  return { kind: "rules", url: doc.url, status: doc.status, parser, sitemaps };
}

/** Whether `token` may fetch `url`: null when the rules do not cover that URL (another origin). */
function allowed(robots: Robots, url: string, token: string): boolean | null {
  if (robots.kind === "allow_all") return true;
  if (robots.kind === "disallow_all") return false;
  // robots.txt governs its own origin only; robots-parser answers undefined for any other.
  return robots.parser.isAllowed(url, token) ?? null;
}

export function checkRobotsAgents(robots: Robots, homeUrl: string, productUrl: string | null): CheckResult {
  const agents = AI_AGENTS.map((a) => ({
    token: a.token,
    vendor: a.vendor,
    role: a.role,
    home: allowed(robots, homeUrl, a.token),
    product_page: productUrl ? allowed(robots, productUrl, a.token) : null,
  }));
  const training = TRAINING_CRAWLERS.map((token) => ({ token, home: allowed(robots, homeUrl, token) }));
  const details = { home_url: homeUrl, product_url: productUrl, agents, training_crawlers: training };
  const blocked = agents.filter((a) => a.home === false || a.product_page === false);
  const found = {
    url: robots.url,
    http_status: robots.status,
    detail: "",
  };
  const fix =
    "Allow AI search and user-triggered agents (OAI-SearchBot, ChatGPT-User, Claude-SearchBot, Claude-User, " +
    "PerplexityBot, Perplexity-User, ...) on / and on product pages in robots.txt; block training " +
    "crawlers separately if you wish.";
  const base =
    robots.kind === "rules"
      ? ""
      : robots.kind === "allow_all"
        ? `robots.txt ${robots.why}, so nothing is disallowed. `
        : `robots.txt ${robots.why}, which RFC 9309 reads as everything disallowed. `;
  if (blocked.length === 0) {
    found.detail = `${base}All ${agents.length} AI search and user-triggered agents may fetch the home page${productUrl ? " and the product page" : ""}.`;
    return result("robots_ai_agents", "pass", found, null, details);
  }
  const fromHome = blocked.filter((a) => a.home === false).map((a) => a.token);
  const fromProduct = blocked.filter((a) => a.home !== false).map((a) => a.token);
  const parts = [
    fromHome.length ? `blocked from the home page: ${fromHome.join(", ")}` : "",
    fromProduct.length ? `blocked from the product page: ${fromProduct.join(", ")}` : "",
  ].filter(Boolean);
  found.detail = `${base}${parts.join("; ")} (of ${agents.length} AI search and user-triggered agents).`;
  return result("robots_ai_agents", blocked.length === agents.length ? "fail" : "warn", found, fix, details);
}

export function checkRobotsSitemapLine(robots: Robots): CheckResult {
  const fix = "Add a `Sitemap: https://<your site>/sitemap.xml` line to robots.txt.";
  if (robots.kind !== "rules") {
    return result(
      "robots_sitemap_line",
      "fail",
      {
        url: robots.url,
        http_status: robots.status,
        detail: `No robots.txt to name a sitemap: ${robots.why}.`,
      },
      fix,
    );
  }
  if (robots.sitemaps.length === 0) {
    return result(
      "robots_sitemap_line",
      "fail",
      { url: robots.url, http_status: robots.status, detail: "robots.txt has no Sitemap: line." },
      fix,
    );
  }
  return result(
    "robots_sitemap_line",
    "pass",
    {
      url: robots.url,
      http_status: robots.status,
      detail: `robots.txt names ${robots.sitemaps.length} sitemap(s).`,
    },
    null,
    { sitemaps: robots.sitemaps.slice(0, 10) },
  );
}
