// Who receives a notification: the site's contact (by email) and the account's people who opted in to
// its kind, each once (addresses compared in lower case), none who opted out.

import type { NotificationKind } from "./events.js";

export type RecipientRole = "site_contact" | "subscriber";

export interface Recipient {
  email: string;
  role: RecipientRole;
}

export interface Subscriber {
  email: string;
  events: readonly NotificationKind[];
}

/** An address as it is compared and stored: trimmed, lower case. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The recipients of a notification of `kind`, the site's contact first. */
export function recipientsOf(input: {
  kind: NotificationKind;
  contactEmail: string | null;
  subscribers: readonly Subscriber[];
  optedOut: ReadonlySet<string>;
}): Recipient[] {
  const out: Recipient[] = [];
  const seen = new Set<string>();
  const add = (email: string, role: RecipientRole) => {
    const e = normalEmail(email);
    if (e === "" || seen.has(e) || input.optedOut.has(e)) return;
    seen.add(e);
    out.push({ email: e, role });
  };
  if (input.contactEmail) add(input.contactEmail, "site_contact");
  for (const s of input.subscribers) if (s.events.includes(input.kind)) add(s.email, "subscriber");
  return out;
}
