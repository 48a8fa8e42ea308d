// One storefront as the probe sees it: every URL fetched at most once per probe (several checks read the
// home page, robots.txt and the sitemap), through the SSRF-safe fetcher.

import type { FetchInit, FetchResult, SafeFetcher } from "../net/safe-fetch.js";

export class Site {
  private readonly fetched = new Map<string, Promise<FetchResult>>();
  /** Requests made, redirects included. */
  requests = 0;

  constructor(
    private readonly fetcher: Pick<SafeFetcher, "fetch">,
    /** The origin the checks run against (set to the home page's, after its redirects). */
    public origin: URL,
  ) {}

  /** A URL on this site (path) or elsewhere (absolute). */
  url(pathOrUrl: string): URL {
    return new URL(pathOrUrl, this.origin);
  }

  get(pathOrUrl: string, init: FetchInit = {}): Promise<FetchResult> {
    const url = this.url(pathOrUrl);
    const key = `${init.followRedirects === false ? "noredirect " : ""}${url.href}`;
    let result = this.fetched.get(key);
    if (!result) {
      result = this.fetcher.fetch(url, init).then((r) => {
        this.requests += 1 + r.redirects.length;
        return r;
      });
      this.fetched.set(key, result);
    }
    return result;
  }
}

/** What an HTTP answer amounts to for a document check. */
export type Document =
  | { present: true; url: string; status: number; text: string; contentType: string }
  | { present: false; url: string; status: number | null; why: string };

const HTML_START = /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

/** Whether a body is an HTML page (by its type or its first tag). */
export function isHtml(contentType: string, text: string): boolean {
  return (
    /\btext\/html\b|\bapplication\/xhtml\+xml\b/i.test(contentType) || HTML_START.test(text.slice(0, 2048))
  );
}

/**
 * A document where one was expected: a 2xx whose body is not an HTML page. A 200 answering with HTML
 * (a storefront's catch-all page, a soft 404) counts as absent, as it would for an agent.
 */
export function asDocument(result: FetchResult, options: { htmlExpected?: boolean } = {}): Document {
  if (!result.ok) return { present: false, url: result.url, status: null, why: result.message };
  if (result.status < 200 || result.status > 299) {
    return { present: false, url: result.url, status: result.status, why: `answered HTTP ${result.status}` };
  }
  const text = result.body.toString("utf8").replace(/^\uFEFF/, "");
  const contentType = result.headers["content-type"] ?? "";
  if (!options.htmlExpected && isHtml(contentType, text)) {
    return {
      present: false,
      url: result.url,
      status: result.status,
      why: "answered 200 with an HTML page (a soft 404), not the document",
    };
  }
  return { present: true, url: result.url, status: result.status, text, contentType };
}

/** The document parsed as a JSON object, or why not. */
export function jsonObject(doc: Document): { value: Record<string, unknown> } | { error: string } {
  if (!doc.present) return { error: doc.why };
  try {
    const value: unknown = JSON.parse(doc.text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { error: "is JSON but not an object" };
    }
    return { value: value as Record<string, unknown> };
  } catch {
    return { error: "is not valid JSON" };
  }
}

export function isHttpsUrl(value: unknown): value is string {
  if (typeof value !== "string") return false;
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
