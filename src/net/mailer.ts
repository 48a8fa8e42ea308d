// The mail port and its two adapters (notifications, issue 35). SMTP through nodemailer when SMTP_URL is
// set, each attempt on a connection of its own with bounded connection, greeting and socket timeouts, so a
// server that hangs fails the attempt (the outbox retries) and never holds the worker. With no SMTP_URL
// (the embedded default) messages are kept: the store holds them, nothing is sent. SMS would be another
// adapter of a port like this one (docs/customer-side.md), not built.

import nodemailer from "nodemailer";

interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** <id@host>: the same on every attempt of one message. */
  messageId: string;
  headers: Record<string, string>;
}

export type MailOutcome =
  | { ok: true; kept: boolean; response: string | null }
  | { ok: false; error: string; code: number | null };

export interface Mailer {
  /** "kept": nothing is sent; the message stays in the store. */
  readonly kind: "smtp" | "kept";
  send(mail: OutgoingMail): Promise<MailOutcome>;
  close(): void;
}

/** No SMTP server: every message is kept. */
export const keptMailer: Mailer = {
  kind: "kept",
  async send() {
    return { ok: true, kept: true, response: null };
  },
  close() {},
};

/** SMTP through nodemailer, with every wait bounded by `timeoutMs`. */
export function smtpMailer(url: string, timeoutMs: number): Mailer {
  const transport = nodemailer.createTransport({
    url,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
  });
  return {
    kind: "smtp",
    async send(mail) {
      try {
        const info = await transport.sendMail({
          from: mail.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: mail.messageId,
          headers: mail.headers,
        });
        return { ok: true, kept: false, response: String(info.response ?? "").slice(0, 500) };
      } catch (err) {
        const e = err as { message?: string; responseCode?: number };
        return {
          ok: false,
          error: String(e.message ?? err).slice(0, 500),
          code: typeof e.responseCode === "number" ? e.responseCode : null,
        };
      }
    },
    close() {
      transport.close();
    },
  };
}
