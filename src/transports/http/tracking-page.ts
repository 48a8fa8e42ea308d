// The public tracking page of an order's tracking link (operations/tracking/): /t/<token> (HTML),
// /t/<token>/status (the same view as JSON) and /t/<token>/events (Server-Sent Events: the view again at
// each change of the order). No key and no cookie; never indexed (X-Robots-Tag and the page's meta), never
// cached, no Referer sent on (the token is in the address), under the console's strict CSP: the page's
// script and style are the static files under /t/assets/, nothing inline. An expired, revoked, tampered
// or unknown token answers one and the same 404. Each request is limited per client IP and per token.
//
// The stream holds nothing of its own: it follows the process's event feed (the order event log read once
// per commit for every stream, kernel/event-feed.ts), keeps the events of its order, and sends the view
// read again. A revocation in this process ends it at once (TrackingTokens.onRevoked); the link is also
// checked again at every heartbeat, so a revocation in another process, or the link's expiry, ends it then.

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RatePolicy } from "../../auth/rate-limiter.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../operations/kernel/operation.js";
import { openLink, trackingView } from "../../operations/tracking/tracking-view.js";
import type { TrackingLinksTable } from "../../storage/schema.js";
import { goneHtml, publicHeaders, registerStaticAssets, spendBudgets } from "./public-pages.js";

/** What every failure answers, whatever the reason. */
const GONE_DETAIL = "This tracking link is not available.";
/** Bytes a stream may have waiting to be sent before it is cut off (the client reconnects). */
const MAX_BUFFERED_BYTES = 256 * 1024;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>Your service visit</title>
<link rel="stylesheet" href="/t/assets/tracking.css">
<script src="/t/assets/tracking.js" defer></script>
</head>
<body>
<main id="tracking" aria-live="polite">
<h1>Your service visit</h1>
<p id="status" class="status">Loading…</p>
<dl id="details"></dl>
<ol id="steps" class="steps"></ol>
<p id="live" class="live"></p>
</main>
</body>
</html>
`;

const GONE_PAGE = goneHtml(
  "/t/assets/tracking.css",
  "This tracking link has expired or was withdrawn. Ask the team that sent it for a new one.",
);

const ASSETS: Record<string, string> = {
  "tracking.js": "text/javascript; charset=utf-8",
  "tracking.css": "text/css; charset=utf-8",
};

interface Policies {
  ip: RatePolicy;
  token: RatePolicy;
}

function policiesOf(services: Services): Policies {
  const { config } = services;
  return {
    ip: {
      name: "tracking-per-ip",
      ratePerMinute: config.TRACKING_IP_RATE_LIMIT_PER_MINUTE,
      burst: config.TRACKING_IP_RATE_LIMIT_BURST,
    },
    token: {
      name: "tracking-per-token",
      ratePerMinute: config.TRACKING_TOKEN_RATE_LIMIT_PER_MINUTE,
      burst: config.TRACKING_TOKEN_RATE_LIMIT_BURST,
    },
  };
}

/** Spends one request of the client IP's and the token's budgets; throws the 429 when either is out. */
function admit(
  services: Services,
  policies: Policies,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
): Promise<void> {
  return spendBudgets(services, reply, [
    [`track-ip:${request.ip}`, policies.ip],
    [`track-token:${token.slice(0, 45)}`, policies.token],
  ]);
}

const gone = () => new ApiError("not_found", GONE_DETAIL);

/**
 * Streams the view of the link `token` opened: now, at each change of its order, until the client goes,
 * the link is revoked (at once in this process), or a heartbeat's check finds it revoked or expired.
 * Registers its end in `open` (ended when the server closes); at most TRACKING_MAX_STREAMS_PER_LINK per
 * link at once in this process (`perLink` counts them).
 */
async function streamView(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  link: TrackingLinksTable,
  open: Set<() => void>,
  perLink: Map<string, number>,
): Promise<void> {
  const held = perLink.get(link.id) ?? 0;
  if (held >= services.config.TRACKING_MAX_STREAMS_PER_LINK) {
    throw new ApiError("rate_limited", "This link holds as many live streams as it may; close one first.", {
      headers: { "Retry-After": "5" },
      extra: { retry_after_seconds: 5 },
    });
  }
  perLink.set(link.id, held + 1);
  const release = () => {
    const left = (perLink.get(link.id) ?? 1) - 1;
    if (left > 0) perLink.set(link.id, left);
    else perLink.delete(link.id);
  };
  const raw = reply.raw;
  let ended = false;
  let eventId = 0;
  const write = (text: string) => {
    if (ended) return;
    if (raw.writableLength > MAX_BUFFERED_BYTES) end();
    else raw.write(text);
  };
  const closed = () => {
    write(`event: stream.closed\ndata: ${JSON.stringify({ detail: GONE_DETAIL })}\n\n`);
    end();
  };
  // The view read again, one read at a time (a burst of events is read once more at the end).
  let reading = false;
  let again = false;
  const refresh = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const now = await openLink(services, token);
        if (now === null) return closed();
        const view = await trackingView(services, now.order);
        eventId++;
        write(`id: ${eventId}\nevent: tracking.status\ndata: ${JSON.stringify(view)}\n\n`);
      } while (again && !ended);
    } catch (err) {
      request.log.warn({ err }, "tracking stream: reading the order failed; the next change tries again");
    } finally {
      reading = false;
    }
  };
  let stopFeed: () => void = () => {};
  const stopRevoked = services.tracking.onRevoked(link.id, closed);
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  function end(): void {
    if (ended) return;
    ended = true;
    stopFeed();
    stopRevoked();
    if (heartbeat) clearInterval(heartbeat);
    open.delete(end);
    release();
    if (!raw.writableEnded) raw.end();
  }
  try {
    stopFeed = await services.events.subscribe(
      { livemode: link.livemode === 1, accountId: link.account_id },
      null,
      (row) => {
        if (row.order_id === link.order_id) void refresh();
      },
    );
  } catch (error) {
    stopRevoked();
    release();
    throw error;
  }
  open.add(end);
  reply.header("content-type", "text/event-stream; charset=utf-8");
  reply.header("x-accel-buffering", "no");
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) raw.setHeader(name, value);
  }
  reply.hijack();
  raw.on("close", end);
  request.raw.socket?.setTimeout(0);
  raw.writeHead(200);
  raw.write("retry: 5000\n\n");
  // The view as it is now, then at each change; the link checked again at every heartbeat.
  void refresh();
  heartbeat = setInterval(() => {
    write(":\n\n");
    openLink(services, token)
      .then((still) => {
        if (still === null) closed();
      })
      .catch((err: unknown) => request.log.warn({ err }, "tracking stream: could not check its link"));
  }, services.config.EVENTS_HEARTBEAT_MS);
  heartbeat.unref();
  if (raw.destroyed) end();
}

export function registerTrackingPage(app: FastifyInstance, services: Services): void {
  const policies = policiesOf(services);
  const open = new Set<() => void>();
  const perLink = new Map<string, number>();
  app.addHook("preClose", (done) => {
    for (const end of [...open]) end();
    done();
  });

  registerStaticAssets(app, "/t/assets", ASSETS);

  app.get("/t/:token", { schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params as { token: string };
    publicHeaders(reply);
    await admit(services, policies, request, reply, token);
    const opened = await openLink(services, token);
    reply.type("text/html; charset=utf-8");
    if (opened === null) return reply.status(404).send(GONE_PAGE);
    return reply.send(PAGE);
  });

  app.get("/t/:token/status", { schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params as { token: string };
    publicHeaders(reply);
    await admit(services, policies, request, reply, token);
    const opened = await openLink(services, token);
    if (opened === null) throw gone();
    return reply.type("application/json").send(JSON.stringify(await trackingView(services, opened.order)));
  });

  app.get("/t/:token/events", { schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params as { token: string };
    publicHeaders(reply);
    await admit(services, policies, request, reply, token);
    const opened = await openLink(services, token);
    if (opened === null) throw gone();
    await streamView(services, request, reply, token, opened.link, open, perLink);
  });
}
