// The message of each notification kind: a subject, a plain-text part and an HTML part made from one
// description (a heading, sentences, links), so the two parts always say the same. Every value is escaped
// in the HTML part. A message holds the technician's first name and trade, the window or ETA in the
// site's time zone, the tracking link (booked, on the way, arrived), the service report link on completed
// for the account's own people (the report holds the price: never for the site's contact), and an
// unsubscribe link; never a price, the contractor's phone or the account's details.

import type { NotificationKind } from "./events.js";
import type { RecipientRole } from "./recipients.js";

export interface NotificationFacts {
  kind: NotificationKind;
  role: RecipientRole;
  /** The job's trade in words (Plumbing). */
  trade: string;
  siteName: string | null;
  technicianFirstName: string | null;
  window: { start: string; end: string } | null;
  etaAt: string | null;
  /** The site's (else the job's) IANA time zone. */
  timeZone: string;
  trackingUrl: string | null;
  reportUrl: string | null;
  unsubscribeUrl: string;
}

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

interface Described {
  subject: string;
  heading: string;
  lines: string[];
  links: Array<{ label: string; url: string }>;
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/** One line: no control characters (a name never breaks a header or a line). */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
}

function timeIn(iso: string, timeZone: string, withDay: boolean): string {
  return new Intl.DateTimeFormat("en-US", {
    timeZone,
    ...(withDay ? { weekday: "short", month: "short", day: "numeric" } : {}),
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  }).format(new Date(iso));
}

/** A window in the site's zone: "Tue, Dec 1, 9:00 AM to 11:00 AM CST". */
function windowText(window: { start: string; end: string }, timeZone: string): string {
  const start = timeIn(window.start, timeZone, true).replace(/ [A-Z][A-Za-z0-9+:-]*$/, "");
  return `${start} to ${timeIn(window.end, timeZone, false)}`;
}

function describe(f: NotificationFacts): Described {
  const trade = oneLine(f.trade);
  const who = f.technicianFirstName ? oneLine(f.technicianFirstName) : "Your technician";
  const at = f.siteName ? ` at ${oneLine(f.siteName)}` : "";
  const window = f.window ? windowText(f.window, f.timeZone) : null;
  const tracking = f.trackingUrl ? [{ label: "Follow the visit", url: f.trackingUrl }] : [];
  switch (f.kind) {
    case "booked":
      return {
        subject: window ? `Your ${trade} visit is booked: ${window}` : `Your ${trade} visit is booked`,
        heading: `Your ${trade} visit${at} is booked`,
        lines: [
          window ? `${who} (${trade}) is due ${window}.` : `${who} (${trade}) will come as soon as possible.`,
        ],
        links: tracking,
      };
    case "en_route": {
      const eta = f.etaAt ? timeIn(f.etaAt, f.timeZone, false) : null;
      return {
        subject: eta ? `${who} is on the way (arriving about ${eta})` : `${who} is on the way`,
        heading: `${who} is on the way${at}`,
        lines: [eta ? `${who} (${trade}) expects to arrive about ${eta}.` : `${who} (${trade}) has set off.`],
        links: tracking,
      };
    }
    case "arrived":
      return {
        subject: `${who} has arrived`,
        heading: `${who} has arrived${at}`,
        lines: [`${who} (${trade}) is on site.`],
        links: tracking,
      };
    case "completed":
      return {
        subject: `Your ${trade} visit is complete`,
        heading: `Your ${trade} visit${at} is complete`,
        lines: [`${who} finished the work.`],
        links:
          f.role === "subscriber" && f.reportUrl
            ? [{ label: "Service report (with your account's key)", url: f.reportUrl }]
            : [],
      };
    case "rescheduled":
      return {
        subject: window ? `Your ${trade} visit moved: ${window}` : `Your ${trade} visit moved`,
        heading: `Your ${trade} visit${at} was rescheduled`,
        lines: [
          window ? `${who} (${trade}) is now due ${window}.` : `${who} (${trade}) will come at a new time.`,
        ],
        links: f.trackingUrl ? [{ label: "Follow the visit", url: f.trackingUrl }] : [],
      };
    case "cancelled":
      return {
        subject: `Your ${trade} visit was cancelled`,
        heading: `Your ${trade} visit${at} was cancelled`,
        lines: ["Nobody will come for this job. Ask the team that booked it if you still need the work."],
        links: [],
      };
  }
}

const FOOTER = "You receive this because you are the contact for this site or asked for these messages.";

/** The message of a notification: its subject, plain text and HTML. */
export function renderNotification(f: NotificationFacts): RenderedMessage {
  const d = describe(f);
  const text = [
    d.heading,
    "",
    ...d.lines,
    ...d.links.flatMap((l) => ["", `${l.label}: ${l.url}`]),
    "",
    "-- ",
    FOOTER,
    `Unsubscribe: ${f.unsubscribeUrl}`,
    "",
  ].join("\n");
  const html = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(d.subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.4">',
    `<h1 style="font-size: 1.25em">${escapeHtml(d.heading)}</h1>`,
    ...d.lines.map((l) => `<p>${escapeHtml(l)}</p>`),
    ...d.links.map((l) => `<p><a href="${escapeHtml(l.url)}">${escapeHtml(l.label)}</a></p>`),
    '<hr><p style="font-size: 0.85em; color: #666">',
    `${escapeHtml(FOOTER)} <a href="${escapeHtml(f.unsubscribeUrl)}">Unsubscribe</a></p>`,
    "</body></html>",
    "",
  ].join("\n");
  return { subject: oneLine(d.subject).slice(0, 250), text, html };
}

/** The Message-ID of notification `id`: the same on every attempt, so a retry is never a second message. */
export function messageIdOf(id: string, host: string): string {
  return `<${id}@${host}>`;
}
