// Wall-clock time in an IANA zone, with Node's built-in ICU (Intl): the local date and time of an
// instant, and the instant of a local date and time, across daylight-saving changes. Pure.

export interface LocalDateTime {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday ... 6 = Saturday */
  weekday: number;
}

const WEEKDAYS: Readonly<Record<string, number>> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether ICU knows `zone` as an IANA time zone. */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The local date and time of `instant` in `zone`. */
export function localDateTime(instant: Date, zone: string): LocalDateTime {
  const parts: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(instant)) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS[parts.weekday ?? ""] ?? 0,
  };
}

/** The zone's offset from UTC at `instant`, in minutes (negative west of Greenwich). */
export function offsetMinutes(instant: Date, zone: string): number {
  const l = localDateTime(instant, zone);
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/**
 * The instant at which the wall clock in `zone` shows the given local date and time. A time the clock
 * skips (spring forward) is read with the offset before the change (02:30 becomes 03:30); a time it shows
 * twice (fall back) is the first of the two.
 */
export function zonedInstant(
  zone: string,
  local: { year: number; month: number; day: number; hour: number; minute: number },
): Date {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  // The offset a little before the wall time read as UTC, then the offset at the instant that gives.
  const before = offsetMinutes(new Date(wall - 86_400_000), zone);
  const first = wall - before * 60_000;
  const after = offsetMinutes(new Date(first), zone);
  if (after === before) return new Date(first);
  const second = wall - after * 60_000;
  // The clock shows the wall time at `second` unless the time was skipped.
  return offsetMinutes(new Date(second), zone) === after ? new Date(second) : new Date(first);
}

/** The local calendar day after `day` (days as year, month, day; the weekday follows). */
export function nextLocalDay(day: { year: number; month: number; day: number }): {
  year: number;
  month: number;
  day: number;
  weekday: number;
} {
  const d = new Date(Date.UTC(day.year, day.month - 1, day.day + 1));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: d.getUTCDay(),
  };
}
