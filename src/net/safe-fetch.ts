// The fetcher for URLs chosen by others (the readiness probe's storefronts, webhook endpoints): it
// refuses what address-policy.ts refuses, at every hop and at connection time.
//
// - DNS is asked once per connection, for all addresses; the connection is refused unless every address
//   is allowed, and then made to an address that was checked (the lookup hands undici the checked list).
//   A name that answers a public address to a check and a private one to the connect (DNS rebinding)
//   cannot slip through: there is no second answer. Literal IP hosts never reach a lookup, so they are
//   checked explicitly before the request.
// - Redirects are followed by hand, at most `maxRedirects`, each Location checked like the first URL.
// - Every request has a deadline; every body a byte cap, counted after decompression too (a small gzip
//   body cannot expand past the cap); the whole process has a cap on concurrent outbound requests.

import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { Agent, request } from "undici";
import {
  type AddressPolicy,
  addressRefusal,
  checkUrl,
  type UrlRefusal,
  UrlRefused,
} from "./address-policy.js";

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface FetcherOptions extends AddressPolicy {
  /** Deadline for one request (connect, headers and body), ms. */
  timeoutMs: number;
  /** Largest body accepted, bytes, after decompression. */
  maxBodyBytes: number;
  maxRedirects: number;
  /** Outbound requests in flight at once, for the whole process; more wait their turn. */
  maxConcurrent: number;
  userAgent: string;
  /** DNS (all addresses of a name); the system resolver by default. */
  resolver?: Resolver;
  /**
   * Test seam: where to actually connect for a checked address. Tests map a public address the policy
   * accepted onto a local fixture server, so the policy runs as in production. Unset in production.
   */
  dialAddress?: (address: string) => string;
}

export interface FetchInit {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Follow redirects (each hop checked); false returns the 3xx itself. Default true. */
  followRedirects?: boolean;
  /** A smaller body cap for this request. */
  maxBodyBytes?: number;
}

interface FetchedResponse {
  ok: true;
  /** The URL that answered (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URLs redirected from, in order. */
  redirects: string[];
  ms: number;
}

export type FetchFailureCode =
  | UrlRefusal
  | "address_refused"
  | "dns_failed"
  | "timeout"
  | "too_large"
  | "too_many_redirects"
  | "bad_redirect"
  | "connection_failed";

interface FetchFailure {
  ok: false;
  url: string;
  code: FetchFailureCode;
  message: string;
  redirects: string[];
  ms: number;
}

export type FetchResult = FetchedResponse | FetchFailure;

class AddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(`${host} resolves to ${address}, which is not a public address (${range})`);
    this.name = "AddressRefused";
  }
}

class BodyTooLarge extends Error {}

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    );
  });

/** A counting semaphore: at most `size` holders, the rest queued in order. */
class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<() => void> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  get inFlight(): number {
    return this.active;
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

export class SafeFetcher {
  private readonly agent: Agent;
  private readonly slots: Semaphore;
  private readonly resolver: Resolver;
  /** Most requests in flight at once so far (for tests and the benchmark). */
  peakInFlight = 0;

  constructor(private readonly options: FetcherOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.slots = new Semaphore(options.maxConcurrent);
    this.agent = new Agent({
      connect: { lookup: this.lookup, timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
      connections: 4,
    });
  }

  /** net.connect's lookup: resolve once, refuse unless every address is allowed, connect to those. */
  private readonly lookup = (
    hostname: string,
    opts: { all?: boolean } | number | undefined,
    callback: LookupCallback,
  ): void => {
    this.resolver(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          err.code = "ENOTFOUND";
          callback(err, []);
          return;
        }
        for (const a of addresses) {
          const refusal = addressRefusal(a.address, this.options);
          if (refusal) {
            callback(new AddressRefused(hostname, a.address, refusal), []);
            return;
          }
        }
        const dial = this.options.dialAddress;
        const checked = addresses.map((a) => {
          const address = dial ? dial(a.address) : a.address;
          return { address, family: isIP(address) };
        });
        if (typeof opts === "object" && opts?.all) callback(null, checked);
        else callback(null, checked[0]?.address ?? "", checked[0]?.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };

  async fetch(target: string | URL, init: FetchInit = {}): Promise<FetchResult> {
    const started = performance.now();
    const redirects: string[] = [];
    let url = typeof target === "string" ? new URL(target) : target;
    const fail = (code: FetchFailureCode, message: string): FetchFailure => ({
      ok: false,
      url: url.href,
      code,
      message,
      redirects,
      ms: Math.round(performance.now() - started),
    });
    for (;;) {
      try {
        checkUrl(url, this.options);
      } catch (error) {
        if (error instanceof UrlRefused) return fail(error.reason, error.message);
        throw error;
      }
      const hop = await this.once(url, init);
      if (!hop.ok) return fail(hop.code, hop.message);
      const location = hop.headers.location;
      const follow = init.followRedirects ?? true;
      if (!follow || hop.status < 300 || hop.status > 399 || hop.status === 304 || !location) {
        return { ...hop, redirects, ms: Math.round(performance.now() - started) };
      }
      if (redirects.length >= this.options.maxRedirects) {
        return fail("too_many_redirects", `more than ${this.options.maxRedirects} redirects`);
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return fail("bad_redirect", `redirect to an invalid URL: ${location.slice(0, 200)}`);
      }
      redirects.push(url.href);
      url = next;
    }
  }

  /** One request, no redirects followed. */
  private async once(
    url: URL,
    init: FetchInit,
  ): Promise<
    | { ok: true; url: string; status: number; headers: Record<string, string>; body: Buffer }
    | { ok: false; code: FetchFailureCode; message: string }
  > {
    const release = await this.slots.acquire();
    this.peakInFlight = Math.max(this.peakInFlight, this.slots.inFlight);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const cap = Math.min(init.maxBodyBytes ?? this.options.maxBodyBytes, this.options.maxBodyBytes);
    try {
      // Literal IP hosts never reach the lookup: fetch() has judged them with checkUrl before this.
      const res = await request(url, {
        dispatcher: this.agent,
        method: init.method ?? "GET",
        headers: {
          "user-agent": this.options.userAgent,
          "accept-encoding": "gzip, deflate, br",
          ...init.headers,
        },
        body: init.body,
        signal,
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      const declared = Number(headers["content-length"]);
      if (Number.isFinite(declared) && declared > cap) {
        res.body.destroy();
        return { ok: false, code: "too_large", message: `body of ${declared} bytes is over ${cap}` };
      }
      const body = await readCapped(res.body, headers["content-encoding"], cap);
      return { ok: true, url: url.href, status: res.statusCode, headers, body };
    } catch (error) {
      return { ok: false, ...classify(error, signal, cap) };
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Reads a body, decompressing it, and stops (with BodyTooLarge) past `cap` bytes on either side. */
async function readCapped(raw: Readable, encoding: string | undefined, cap: number): Promise<Buffer> {
  const coding = encoding?.trim().toLowerCase();
  const decoder =
    coding === "gzip" || coding === "x-gzip"
      ? createGunzip()
      : coding === "deflate"
        ? createInflate()
        : coding === "br"
          ? createBrotliDecompress()
          : null;
  let rawBytes = 0;
  const source: AsyncIterable<Buffer> = decoder
    ? (async function* () {
        raw.on("data", (chunk: Buffer) => {
          rawBytes += chunk.length;
          if (rawBytes > cap) raw.destroy(new BodyTooLarge());
        });
        raw.on("error", (err) => decoder.destroy(err));
        raw.pipe(decoder);
        yield* decoder;
      })()
    : raw;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > cap) throw new BodyTooLarge();
      chunks.push(chunk);
    }
  } finally {
    raw.destroy();
    decoder?.destroy();
  }
  return Buffer.concat(chunks, size);
}

function classify(
  error: unknown,
  signal: AbortSignal,
  cap: number,
): { code: FetchFailureCode; message: string } {
  const chain: unknown[] = [];
  for (let e: unknown = error; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const refused = chain.find((e) => e instanceof AddressRefused) as AddressRefused | undefined;
  if (refused) return { code: "address_refused", message: refused.message };
  if (chain.some((e) => e instanceof BodyTooLarge)) {
    return { code: "too_large", message: `body is over ${cap} bytes (after decompression)` };
  }
  if (signal.aborted || chain.some((e) => /Timeout/i.test((e as Error).name ?? ""))) {
    return { code: "timeout", message: "no complete answer before the deadline" };
  }
  const code = chain.map((e) => (e as NodeJS.ErrnoException).code).find(Boolean);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA") {
    return { code: "dns_failed", message: `the name did not resolve (${code})` };
  }
  const message = (chain[chain.length - 1] as Error | undefined)?.message ?? String(error);
  return { code: "connection_failed", message: code ? `${code}: ${message}` : message };
}
