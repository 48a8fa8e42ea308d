// The public request form of a site's request link (operations/requests/): GET /r/<token> (the page),
// GET /r/<token>/site (the site's name and city, all the form shows of it, as JSON) and POST /r/<token>
// (a submission, JSON from the page's script), then POST /r/<token>/photos/<reference> (a photo's bytes,
// request-photos.ts). No key and no cookie; never indexed, never cached, no
// Referer sent on (the token is in the address), under the console's strict CSP: the page's script and
// style are static files under /r/assets/, nothing inline, and every text is drawn as text. A revoked,
// tampered or unknown token answers one and the same 404. Every request is limited per client IP; a
// submission (and a photo) also per client IP and per link, with budgets of their own, before its body is
// read; a body over REQUEST_LIMITS.formBytes (a photo over REQUEST_LIMITS.photoBytes) is refused with 413.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { RatePolicy } from "../../auth/rate-limiter.js";
import { REQUEST_LIMITS } from "../../domain/requests/request.js";
import { ApiError, validationError } from "../../errors.js";
import { textErrors } from "../../operations/kernel/input-text.js";
import type { Services } from "../../operations/kernel/operation.js";
import { receiveRequest } from "../../operations/requests/intake.js";
import { openRequestLink } from "../../operations/requests/request-links.js";
import { addRequestPhoto } from "../../operations/requests/request-photos.js";
import { reportShape } from "../../operations/requests/request-views.js";
import { handleError, sendProblem } from "./problem-reply.js";
import { goneHtml, publicHeaders, registerStaticAssets, spendBudgets } from "./public-pages.js";

/** What every failure of a token answers, whatever the reason. */
const GONE_DETAIL = "This request link is not available.";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>Report a problem</title>
<link rel="stylesheet" href="/r/assets/request.css">
<script src="/r/assets/request.js" defer></script>
</head>
<body>
<main>
<h1>Report a problem</h1>
<p id="site" class="site">Loading…</p>
<form id="request-form" novalidate>
<label for="description">What is wrong?</label>
<textarea id="description" name="description" rows="5" maxlength="${REQUEST_LIMITS.descriptionLength}" required></textarea>
<fieldset>
<legend>How urgent is it?</legend>
<label><input type="radio" name="urgency" value="emergency"> Emergency: unsafe, or the site cannot work</label>
<label><input type="radio" name="urgency" value="urgent"> Urgent: today if possible</label>
<label><input type="radio" name="urgency" value="routine" checked> Routine</label>
</fieldset>
<label for="name">Your name</label>
<input id="name" name="name" autocomplete="name" maxlength="${REQUEST_LIMITS.nameLength}" required>
<label for="contact">Phone or email to reach you</label>
<input id="contact" name="contact" autocomplete="tel" maxlength="${REQUEST_LIMITS.contactLength}" required>
<label for="photos">Photos (up to ${REQUEST_LIMITS.photos}, optional)</label>
<input id="photos" name="photos" type="file" accept="image/jpeg,image/png,image/webp" multiple>
<button type="submit" id="send">Send</button>
<p id="error" class="error" role="alert"></p>
</form>
<section id="done" class="done" hidden aria-live="polite">
<h2>Thank you</h2>
<p id="done-text"></p>
<p>Your reference: <strong id="reference"></strong></p>
<p id="photo-note" class="error"></p>
</section>
</main>
</body>
</html>
`;

const GONE_PAGE = goneHtml(
  "/r/assets/request.css",
  "This request link was replaced or withdrawn. Ask the team that posted it for the current one.",
);

const ASSETS: Record<string, string> = {
  "request.js": "text/javascript; charset=utf-8",
  "request.css": "text/css; charset=utf-8",
};

/** What the page's script sends. */
const submissionSchema = z.strictObject(reportShape);

/** The answer to a submission: a reference, and what became of it in words; never another order's details. */
function confirmation(r: { id: string; status: string }) {
  const text =
    r.status === "ordered"
      ? "A work order was created; the team will arrange the visit."
      : r.status === "linked"
        ? "The team is already working on this; your report was added to it."
        : "The team will review it shortly.";
  return { reference: r.id, status: r.status === "pending" ? "received" : r.status, message: text };
}

function policy(name: string, ratePerMinute: number, burst: number): RatePolicy {
  return { name, ratePerMinute, burst };
}

/** The submission's fields as refused, in the validation problem's shape. */
function refused(error: z.ZodError): ApiError {
  return validationError(
    error.issues.map((i) => ({ field: i.path.join(".") || "body", message: i.message })),
  );
}

/** The form's rate policies (config). */
function policiesOf(services: Services) {
  const c = services.config;
  return {
    perIp: policy(
      "request-form-per-ip",
      c.REQUEST_FORM_IP_RATE_LIMIT_PER_MINUTE,
      c.REQUEST_FORM_IP_RATE_LIMIT_BURST,
    ),
    submitIp: policy(
      "request-submit-per-ip",
      c.REQUEST_SUBMIT_IP_RATE_LIMIT_PER_MINUTE,
      c.REQUEST_SUBMIT_IP_RATE_LIMIT_BURST,
    ),
    submitLink: policy(
      "request-submit-per-link",
      c.REQUEST_SUBMIT_LINK_RATE_LIMIT_PER_MINUTE,
      c.REQUEST_SUBMIT_LINK_RATE_LIMIT_BURST,
    ),
  };
}

const tokenOf = (request: FastifyRequest) => (request.params as { token: string }).token;
const ipBudget = (request: FastifyRequest, p: RatePolicy) => [`reqform-ip:${request.ip}`, p] as const;

/** The options of a route that takes a body from the form: its limits spent before the body is read (a
 * flood costs no parsing), and a body over `maxBytes` answered 413 with the limit. */
function submitOptions(services: Services, maxBytes: number, what: string) {
  const p = policiesOf(services);
  return {
    schema: { hide: true },
    bodyLimit: maxBytes,
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
      publicHeaders(reply);
      await spendBudgets(services, reply, [
        ipBudget(request, p.perIp),
        [`reqsubmit-ip:${request.ip}`, p.submitIp],
        [`reqsubmit-link:${tokenOf(request).slice(0, 45)}`, p.submitLink],
      ]);
    },
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE" || error.statusCode === 413) {
        const tooLarge = new ApiError("payload_too_large", `${what} must be at most ${maxBytes} bytes.`, {
          extra: { limit_bytes: maxBytes },
        });
        return sendProblem(request, reply, tooLarge);
      }
      return handleError(error, request, reply);
    },
  };
}

/** The photos' route: the image's bytes as the body (image/jpeg, image/png or image/webp; any other type
 * 415), within REQUEST_LIMITS.photoBytes (413), to a request made through the same link. */
function registerPhotos(app: FastifyInstance, services: Services): void {
  app.register(async (scope) => {
    scope.addContentTypeParser(
      ["image/jpeg", "image/png", "image/webp"],
      { parseAs: "buffer", bodyLimit: REQUEST_LIMITS.photoBytes },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      "/r/:token/photos/:reference",
      submitOptions(services, REQUEST_LIMITS.photoBytes, "A photo"),
      async (request, reply) => {
        const opened = await openRequestLink(services, tokenOf(request));
        if (opened === null) throw new ApiError("not_found", GONE_DETAIL);
        if (!Buffer.isBuffer(request.body))
          throw new ApiError(
            "unsupported_media_type",
            "Send a photo as image/jpeg, image/png or image/webp.",
          );
        const { reference } = request.params as { reference: string };
        const added = await addRequestPhoto(
          services,
          opened.link,
          reference.slice(0, 64),
          request.body,
          () => {
            return new ApiError("not_found", GONE_DETAIL);
          },
        );
        return reply
          .status(201)
          .type("application/json")
          .send(JSON.stringify({ photo: added.position }));
      },
    );
  });
}

export function registerRequestPage(app: FastifyInstance, services: Services): void {
  const { perIp } = policiesOf(services);
  registerStaticAssets(app, "/r/assets", ASSETS);
  registerPhotos(app, services);

  app.get("/r/:token", { schema: { hide: true } }, async (request, reply) => {
    publicHeaders(reply);
    await spendBudgets(services, reply, [ipBudget(request, perIp)]);
    const opened = await openRequestLink(services, tokenOf(request));
    reply.type("text/html; charset=utf-8");
    if (opened === null) return reply.status(404).send(GONE_PAGE);
    return reply.send(PAGE);
  });

  app.get("/r/:token/site", { schema: { hide: true } }, async (request, reply) => {
    publicHeaders(reply);
    await spendBudgets(services, reply, [ipBudget(request, perIp)]);
    const opened = await openRequestLink(services, tokenOf(request));
    if (opened === null) throw new ApiError("not_found", GONE_DETAIL);
    const body = { site: { name: opened.site.name, city: opened.site.city, state: opened.site.state } };
    return reply.type("application/json").send(JSON.stringify(body));
  });

  app.post(
    "/r/:token",
    submitOptions(services, REQUEST_LIMITS.formBytes, "The form's body"),
    async (request, reply) => {
      const opened = await openRequestLink(services, tokenOf(request));
      if (opened === null) throw new ApiError("not_found", GONE_DETAIL);
      const badText = textErrors(request.body);
      if (badText.length > 0) throw validationError(badText);
      const parsed = submissionSchema.safeParse(request.body);
      if (!parsed.success) throw refused(parsed.error);
      const row = await receiveRequest(services, opened.site, parsed.data, {
        source: "form",
        linkId: opened.link.id,
        actor: `system:request-link:${opened.link.id}`,
      });
      return reply
        .status(201)
        .type("application/json")
        .send(JSON.stringify(confirmation(row)));
    },
  );
}
