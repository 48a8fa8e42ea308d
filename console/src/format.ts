// Display helpers: money, times, countdowns, status labels.

import { signal } from "@preact/signals";
import type { OrderStatus } from "./types";

/** The current time, ticking every second: read only by what counts down (a row reading it re-renders
 * every second, so a board of thousands of rows reads `minute` for anything coarser). */
export const now = signal(Date.now());
/** The current time, ticking every 30 s: for "5 min ago". */
export const minute = signal(Date.now());
setInterval(() => {
  now.value = Date.now();
  if (now.value - minute.value >= 30_000) minute.value = now.value;
}, 1000);

export const STATUS_LABEL: Record<OrderStatus, string> = {
  received: "Received",
  offered: "Offered",
  accepted: "Accepted",
  en_route: "En route",
  on_site: "On site",
  completed: "Completed",
  invoiced: "Invoiced",
  revision_requested: "Revision requested",
  invoice_rejected: "Invoice rejected",
  approved: "Approved",
  paid: "Paid",
  needs_dispatcher: "Needs dispatcher",
  cancelled: "Cancelled",
  cannot_complete: "Cannot complete",
};

/** Statuses `list` leaves out (never when it has them all). */
type Unlisted<L extends readonly OrderStatus[]> = Exclude<OrderStatus, L[number]>;

/** An ordering of every status (a legend, a stack): one the domain adds fails typecheck until placed. */
export function everyStatus<const L extends readonly OrderStatus[]>(
  list: L & ([Unlisted<L>] extends [never] ? unknown : { missing: Unlisted<L> }),
): OrderStatus[] {
  return [...list];
}

export function money(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return "—";
  return (cents / 100).toLocaleString("en-US", { style: "currency", currency: "USD" });
}

const SPECIAL: Record<string, string> = { hvac: "HVAC" };

/** A code as words: "appliance_repair" -> "Appliance repair", "hvac" -> "HVAC". */
export function titleCase(code: string): string {
  return SPECIAL[code] ?? code.replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());
}

export function place(loc: { city: string | null; state: string; zip: string | null }): string {
  return [loc.city, loc.state].filter(Boolean).join(", ") + (loc.zip ? ` ${loc.zip}` : "");
}

/** "just now", "2 min ago", "3 h ago", ... (read with the 30-second clock: finer would be false precision). */
export function ago(iso: string, at: number): string {
  const s = Math.max(0, Math.round((at - Date.parse(iso)) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** Time left until `iso` as m:ss (or h:mm:ss), "expired" once passed. */
export function timeLeft(iso: string, at: number): { text: string; seconds: number } {
  const s = Math.round((Date.parse(iso) - at) / 1000);
  if (s <= 0) return { text: "expired", seconds: 0 };
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return { text: h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`, seconds: s };
}

export function clock(iso: string | null): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
}

/** Minutes as a person reads them: "25 min", "1 h 35 min", "3 d 22 h". */
export function duration(minutes: number): string {
  const m = Math.max(0, Math.round(minutes));
  if (m < 60) return `${m} min`;
  if (m < 24 * 60) {
    const rest = m % 60;
    return rest === 0 ? `${Math.floor(m / 60)} h` : `${Math.floor(m / 60)} h ${rest} min`;
  }
  const hours = Math.round(m / 60);
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** An instant in a zone, the zone named: "Tue, Nov 24, 9:00 AM EST" (the browser's zone when none). */
export function zoned(iso: string, zone: string | null | undefined): string {
  return new Date(iso).toLocaleString("en-US", {
    timeZone: zone ?? undefined,
    weekday: "short",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  });
}

/** "in 25 min" / "25 min ago" for an instant within a day of `at`; "" further off. */
export function relative(iso: string, at: number): string {
  const min = Math.round((Date.parse(iso) - at) / 60_000);
  if (Math.abs(min) >= 24 * 60) return "";
  return min >= 0 ? `in ${duration(min)}` : `${duration(-min)} ago`;
}

const DAY_TIME: Intl.DateTimeFormatOptions = {
  weekday: "short",
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
};
const dayIn = (iso: string, zone: string | null | undefined) =>
  new Date(iso).toLocaleDateString("en-US", { timeZone: zone ?? undefined });

/** A span in a zone, the zone named once: "Tue, Nov 24, 10:00 AM – 12:00 PM PST" (the end's day too when
 * it falls on another). */
export function zonedSpan(start: string, end: string, zone: string | null | undefined): string {
  if (dayIn(start, zone) !== dayIn(end, zone)) return `${zoned(start, zone)} – ${zoned(end, zone)}`;
  const from = new Date(start).toLocaleString("en-US", { timeZone: zone ?? undefined, ...DAY_TIME });
  const until = new Date(end).toLocaleTimeString("en-US", {
    timeZone: zone ?? undefined,
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  });
  return `${from} – ${until}`;
}

/** A time in a zone, named, as short as reads right at `at`: "10:02 AM PST" on that day there, else
 * "Tue, Nov 24, 10:02 AM PST". */
export function zonedClock(iso: string, zone: string | null | undefined, at: number): string {
  if (dayIn(iso, zone) !== dayIn(new Date(at).toISOString(), zone)) return zoned(iso, zone);
  return new Date(iso).toLocaleTimeString("en-US", {
    timeZone: zone ?? undefined,
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  });
}
