// Which URLs and addresses the service may fetch on behalf of anonymous callers (the readiness probe) and
// of accounts (webhook delivery). The rule: http or https, no credentials in the URL, ports 80 and 443
// (plus configured ones), and every address the host stands for must be public unicast. ipaddr.js
// classifies addresses by the IANA special-purpose registries; only its "unicast" class (what is left
// once every special range is taken out) is public. An IPv4-mapped IPv6 address is judged as the IPv4
// address it carries.
//
// PROBE_ALLOW_PRIVATE_NETWORKS=true (for local fixtures and private deployments) also admits private,
// loopback and unique-local addresses. Never admitted, whatever the setting: link-local (169.254/16,
// fe80::/10, where cloud metadata services live), unspecified, broadcast and multicast addresses.

import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export const MAX_URL_LENGTH = 255;

export type UrlRefusal =
  | "too_long"
  | "unparseable"
  | "scheme_not_allowed"
  | "credentials_not_allowed"
  | "port_not_allowed"
  | "not_public_host"
  | "unresolvable_host";

export class UrlRefused extends Error {
  constructor(
    readonly reason: UrlRefusal,
    message: string,
  ) {
    super(message);
    this.name = "UrlRefused";
  }
}

export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  /** Ports that may be fetched besides the scheme's default (80 for http, 443 for https). */
  extraPorts: ReadonlySet<number>;
}

// Ranges admitted only with allowPrivateNetworks.
const PRIVATE_RANGES = new Set(["private", "loopback", "uniqueLocal", "carrierGradeNat"]);

// Special-use names (RFC 6761, 6762, 8375, 9476 and ICANN's .internal) that never name a public host.
const SPECIAL_USE_SUFFIXES = [
  "localhost",
  "local",
  "invalid",
  "test",
  "example",
  "internal",
  "home.arpa",
  "onion",
  "alt",
  "arpa",
];

/** The address's class: "unicast" when public, else ipaddr.js's name for its special range. */
function addressRange(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  // ::/96, the deprecated IPv4-compatible form (the URL parser turns [::127.0.0.1] into [::7f00:1]):
  // ipaddr.js calls it unicast, but it names an IPv4 address, and no public host uses it.
  if (v6.parts.slice(0, 6).every((p) => p === 0)) return "ipv4Compatible";
  return v6.range();
}

/** Null when the address may be fetched under the policy, else why not (its range). */
export function addressRefusal(address: string, policy: AddressPolicy): string | null {
  let range: string;
  try {
    range = addressRange(address);
  } catch {
    return "unparseable";
  }
  if (range === "unicast") return null;
  if (policy.allowPrivateNetworks && PRIVATE_RANGES.has(range)) return null;
  return range;
}

/** The URL's host without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Parses what a caller gave (a URL, or a bare domain meaning https://<domain>/) and applies every rule
 * that needs no DNS: scheme, credentials, port, literal addresses and special-use names. Throws UrlRefused.
 */
export function parseTarget(input: string, policy: AddressPolicy): URL {
  const text = input.trim();
  if (text.length === 0) throw new UrlRefused("unparseable", "url is empty.");
  if (text.length > MAX_URL_LENGTH) {
    throw new UrlRefused("too_long", `url is longer than ${MAX_URL_LENGTH} characters.`);
  }
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UrlRefused("unparseable", "url is not a valid URL or domain name.");
  }
  checkUrl(url, policy);
  return url;
}

/** The rules of parseTarget for a URL met later (a redirect's Location, a sitemap entry). */
export function checkUrl(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UrlRefused(
      "scheme_not_allowed",
      `url must use http or https, not ${url.protocol.slice(0, -1)}.`,
    );
  }
  if (url.username || url.password) {
    throw new UrlRefused("credentials_not_allowed", "url must not contain a user name or password.");
  }
  if (url.port !== "" && !policy.extraPorts.has(Number(url.port))) {
    throw new UrlRefused(
      "port_not_allowed",
      `url port ${url.port} is not allowed: only ${url.protocol === "https:" ? "443" : "80"} (the scheme's default) is.`,
    );
  }
  const host = bareHost(url);
  if (isIP(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) {
      throw new UrlRefused("not_public_host", `url host ${host} is not a public address (${refusal}).`);
    }
    return;
  }
  if (policy.allowPrivateNetworks) return;
  const name = host.toLowerCase().replace(/\.$/, "");
  if (!name.includes(".")) {
    throw new UrlRefused("not_public_host", `url host ${host} is not a public domain name.`);
  }
  const special = SPECIAL_USE_SUFFIXES.find((s) => name === s || name.endsWith(`.${s}`));
  if (special) {
    throw new UrlRefused(
      "not_public_host",
      `url host ${host} is under .${special}, a special-use name that is never public.`,
    );
  }
}
