// Answer-engine maps: the sitemap (or sitemap index) that lists the store's pages, and llms.txt /
// llms-full.txt (https://llmstxt.org; llms-full.txt is the common convention of the same in full).

import { gunzipSync } from "node:zlib";
import { XMLParser } from "fast-xml-parser";
import type { FetchResult } from "../net/safe-fetch.js";
import { type CheckResult, result } from "./scoring.js";
import { asDocument, isHtml, isRecord, type Site } from "./site.js";

const SITEMAP_MAX_BYTES = 10 * 1024 * 1024;
const xml = new XMLParser({ ignoreAttributes: true, processEntities: true, parseTagValue: false });

type Parsed = { kind: "urlset" | "index"; locs: string[] } | { kind: "invalid"; why: string };

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

function locs(entries: unknown): string[] {
  return asList(entries)
    .map((e) => (isRecord(e) && typeof e.loc === "string" ? e.loc.trim() : null))
    .filter((l): l is string => !!l);
}

/** A sitemap's page URLs, or an index's sitemap URLs. */
function parseSitemap(fetched: FetchResult): Parsed & { url: string; status: number | null } {
  const url = fetched.url;
  if (!fetched.ok) return { kind: "invalid", why: fetched.message, url, status: null };
  if (fetched.status < 200 || fetched.status > 299) {
    return { kind: "invalid", why: `answered HTTP ${fetched.status}`, url, status: fetched.status };
  }
  let body = fetched.body;
  // A .xml.gz sitemap served as a file (application/gzip, no Content-Encoding): unpack it, within the cap.
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      body = gunzipSync(body, { maxOutputLength: SITEMAP_MAX_BYTES });
    } catch {
      return {
        kind: "invalid",
        why: "is gzip that does not unpack (or unpacks too large)",
        url,
        status: fetched.status,
      };
    }
  }
  const text = body.toString("utf8").replace(/^\uFEFF/, "");
  const status = fetched.status;
  if (isHtml(fetched.headers["content-type"] ?? "", text)) {
    return { kind: "invalid", why: "answered with an HTML page, not a sitemap", url, status };
  }
  // Sitemaps need no DTD; refusing one refuses entity-expansion tricks with it.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return { kind: "invalid", why: "carries a DOCTYPE", url, status };
  let doc: unknown;
  try {
    doc = xml.parse(text, true);
  } catch (error) {
    return {
      kind: "invalid",
      why: `is not well-formed XML (${(error as Error).message.split("\n")[0]})`,
      url,
      status,
    };
  }
  if (!isRecord(doc)) return { kind: "invalid", why: "is not XML", url, status };
  if (isRecord(doc.urlset) || doc.urlset === "") {
    return { kind: "urlset", locs: isRecord(doc.urlset) ? locs(doc.urlset.url) : [], url, status };
  }
  if (isRecord(doc.sitemapindex) || doc.sitemapindex === "") {
    return {
      kind: "index",
      locs: isRecord(doc.sitemapindex) ? locs(doc.sitemapindex.sitemap) : [],
      url,
      status,
    };
  }
  return { kind: "invalid", why: "has neither <urlset> nor <sitemapindex>", url, status };
}

const PRODUCT_PATH = /\/(?:products?|p|item|items|dp|shop\/[^/]+)\/[^/?#]+/i;

/** The page most likely to be a product page: a product-looking path, else any page but the home page. */
function pickProductUrl(pages: string[], origin: URL): string | null {
  const valid = pages.filter((p) => {
    try {
      const u = new URL(p);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  });
  return (
    valid.find((p) => PRODUCT_PATH.test(new URL(p).pathname)) ??
    valid.find((p) => {
      const u = new URL(p);
      return !(u.origin === origin.origin && (u.pathname === "/" || u.pathname === ""));
    }) ??
    null
  );
}

/** Finds the sitemap (robots.txt's Sitemap: lines, else /sitemap.xml), judges it and picks a product page. */
export async function checkSitemap(
  site: Site,
  robotsSitemaps: string[],
): Promise<{ check: CheckResult; productUrl: string | null }> {
  const candidates = [...new Set([...robotsSitemaps.slice(0, 3), site.url("/sitemap.xml").href])];
  const fix =
    "Serve a sitemap.xml (or a sitemap index) listing your product pages, and name it in robots.txt with a Sitemap: line.";
  let first: (Parsed & { url: string; status: number | null }) | null = null;
  for (const candidate of candidates) {
    const parsed = parseSitemap(await site.get(candidate, { maxBodyBytes: SITEMAP_MAX_BYTES }));
    first ??= parsed;
    if (parsed.kind === "invalid") continue;
    let pages = parsed.kind === "urlset" ? parsed.locs : [];
    let children = 0;
    if (parsed.kind === "index") {
      // An index: the first two child sitemaps with entries are enough to find a product page.
      for (const child of parsed.locs.slice(0, 2)) {
        const sub = parseSitemap(await site.get(child, { maxBodyBytes: SITEMAP_MAX_BYTES }));
        if (sub.kind === "urlset" && sub.locs.length > 0) {
          children++;
          pages = pages.concat(sub.locs);
        }
      }
    }
    const productUrl = pickProductUrl(pages, site.origin);
    const details = { kind: parsed.kind, entries: parsed.locs.length, product_url: productUrl };
    const found = { url: parsed.url, http_status: parsed.status, detail: "" };
    if (pages.length === 0) {
      found.detail =
        parsed.kind === "index"
          ? `A sitemap index with ${parsed.locs.length} sitemap(s), none of the first read lists a page.`
          : "A sitemap with no <url> entries.";
      return { check: result("sitemap", "warn", found, fix, details), productUrl };
    }
    found.detail =
      parsed.kind === "index"
        ? `A sitemap index of ${parsed.locs.length} sitemap(s); ${children} read, ${pages.length} page(s).`
        : `A sitemap of ${pages.length} page(s).`;
    return { check: result("sitemap", "pass", found, null, details), productUrl };
  }
  return {
    check: result(
      "sitemap",
      "fail",
      {
        url: first?.url ?? null,
        http_status: first?.status ?? null,
        detail: `No valid sitemap: ${first && first.kind === "invalid" ? first.why : "none found"}.`,
      },
      fix,
    ),
    productUrl: null,
  };
}

export async function checkLlmsTxt(site: Site): Promise<CheckResult> {
  const doc = asDocument(await site.get("/llms.txt"));
  const fix =
    "Publish /llms.txt as Markdown: an H1 with the store's name, a > summary, and H2 sections linking your key pages (https://llmstxt.org).";
  if (!doc.present) {
    return result(
      "llms_txt",
      "fail",
      { url: doc.url, http_status: doc.status, detail: `No llms.txt: ${doc.why}.` },
      fix,
    );
  }
  const firstLine = doc.text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  const links = (doc.text.match(/\[[^\]]+\]\([^)\s]+\)/g) ?? []).length;
  const details = { h1: /^# \S/.test(firstLine) ? firstLine.slice(2).trim() : null, links };
  if (!/^# \S/.test(firstLine)) {
    return result(
      "llms_txt",
      "warn",
      {
        url: doc.url,
        http_status: doc.status,
        detail: "llms.txt is there but does not start with an H1 (# Name).",
      },
      fix,
      details,
    );
  }
  return result(
    "llms_txt",
    "pass",
    { url: doc.url, http_status: doc.status, detail: `llms.txt starts with an H1 and has ${links} link(s).` },
    null,
    details,
  );
}

export async function checkLlmsFullTxt(site: Site): Promise<CheckResult> {
  const doc = asDocument(await site.get("/llms-full.txt"));
  const fix = "Publish /llms-full.txt: the content your llms.txt links to, inlined as one Markdown file.";
  if (!doc.present || doc.text.trim() === "") {
    const why = doc.present ? "it is empty" : doc.why;
    return result(
      "llms_full_txt",
      "fail",
      { url: doc.url, http_status: doc.status, detail: `No llms-full.txt: ${why}.` },
      fix,
    );
  }
  return result(
    "llms_full_txt",
    "pass",
    {
      url: doc.url,
      http_status: doc.status,
      detail: `llms-full.txt is there (${Buffer.byteLength(doc.text)} bytes).`,
    },
    null,
  );
}
