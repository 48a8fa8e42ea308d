// Which URLs may receive webhooks: checked when an order names a callback_url and when an account sets
// its default endpoint, so that a URL that could never be delivered is refused at once (422), not found
// out at the first delivery. The SSRF-safe fetcher applies the same rules again, with DNS, at every
// delivery (a name may resolve to a private address later).

import type { Config } from "../config.js";
import { validationError } from "../errors.js";
import { checkUrl, UrlRefused } from "../net/address-policy.js";

/**
 * Live mode needs https; no URL may name a private, loopback or link-local address or a special-use
 * name, or use a port outbound requests may not (PROBE_ALLOW_PRIVATE_NETWORKS and PROBE_ALLOWED_PORTS
 * govern every outbound request).
 */
export function checkWebhookUrl(
  raw: string,
  field: string,
  livemode: boolean,
  config: Pick<Config, "PROBE_ALLOW_PRIVATE_NETWORKS" | "PROBE_ALLOWED_PORTS">,
): void {
  const refuse = (message: string): never => {
    throw validationError([{ field, message }]);
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ field, message: `${field} must be an absolute http(s) URL` }]);
  }
  if (livemode && url.protocol !== "https:") refuse(`${field} must use https for live orders and keys`);
  try {
    checkUrl(url, {
      allowPrivateNetworks: config.PROBE_ALLOW_PRIVATE_NETWORKS,
      extraPorts: config.PROBE_ALLOWED_PORTS,
    });
  } catch (error) {
    if (error instanceof UrlRefused) refuse(error.message.replace(/^url\b/, field));
    throw error;
  }
}
