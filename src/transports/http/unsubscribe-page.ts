// The unsubscribe link every notification carries (operations/notifications/): /n/unsubscribe/<token>.
// GET shows a page asking to confirm (a mail scanner following links opts nobody out); POST opts the
// message's address out of the account's notifications in its mode: the page's form, and the one-click
// POST of RFC 8058 (List-Unsubscribe-Post) that mail clients send. No key, no cookie, never indexed; a
// tampered or unknown token answers one 404 page. Limited per client IP as the tracking pages are.

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../../operations/kernel/operation.js";
import type { NotificationsTable } from "../../storage/schema.js";
import { publicHeaders, spendBudgets, staticPageHtml } from "./public-pages.js";

function page(title: string, body: string): string {
  return staticPageHtml({ title, stylesheet: "/t/assets/tracking.css", body: `${body}\n`, viewport: true });
}

const GONE = page(
  "Link not available",
  "<p>This unsubscribe link is not valid. Ask the team that sent the message.</p>",
);
const CONFIRM = page(
  "Stop these messages?",
  `<p>You will no longer receive messages about service visits from this team.</p>
<form method="post"><button type="submit">Unsubscribe</button></form>`,
);
const DONE = page(
  "You are unsubscribed",
  "<p>You will receive no more of these messages. The team that sent them can add you back if you ask.</p>",
);

function admit(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const policy = {
    name: "unsubscribe-per-ip",
    ratePerMinute: services.config.TRACKING_IP_RATE_LIMIT_PER_MINUTE,
    burst: services.config.TRACKING_IP_RATE_LIMIT_BURST,
  };
  return spendBudgets(services, reply, [[`unsubscribe-ip:${request.ip}`, policy]]);
}

/** The message a token names, or null (any failure answers alike). */
async function messageOf(services: Services, token: string): Promise<NotificationsTable | null> {
  const id = services.unsubscribe.check(token);
  return id === null ? null : ((await services.store.notifications.byId(id)) ?? null);
}

export function registerUnsubscribePage(app: FastifyInstance, services: Services): void {
  app.register(async (scope) => {
    // The page's form and the one-click POST send a small urlencoded body; its content is not needed.
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 1024 },
      (_request, _body, done) => done(null, {}),
    );
    const headers = (reply: FastifyReply) => publicHeaders(reply).type("text/html; charset=utf-8");

    scope.get("/n/unsubscribe/:token", { schema: { hide: true } }, async (request, reply) => {
      const { token } = request.params as { token: string };
      headers(reply);
      await admit(services, request, reply);
      const message = await messageOf(services, token);
      return message === null ? reply.status(404).send(GONE) : reply.send(CONFIRM);
    });

    scope.post("/n/unsubscribe/:token", { schema: { hide: true } }, async (request, reply) => {
      const { token } = request.params as { token: string };
      headers(reply);
      await admit(services, request, reply);
      const message = await messageOf(services, token);
      if (message === null) return reply.status(404).send(GONE);
      await services.store.notifications.setOptOut(
        {
          account_id: message.account_id,
          livemode: message.livemode,
          email: message.recipient,
          created_at: services.now().toISOString(),
          source: "link",
        },
        true,
      );
      return reply.send(DONE);
    });
  });
}
