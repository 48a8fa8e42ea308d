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

/** The local date and time of `instant` in `zone`, read from ICU. */
function localDateTimeIcu(instant: Date, zone: string): LocalDateTime {
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

const HOUR_MS = 3_600_000;
/** Each zone's offset (ms, local minus UTC) by UTC hour, for the hours without a change of offset. */
const hourOffsets = new Map<string, Map<number, number>>();
const HOURS_KEPT = 4096;

/** The zone's offset from UTC over the whole UTC hour `hour` (ms), or null when it changes within it. */
function hourOffset(zone: string, hour: number): number | null {
  let byHour = hourOffsets.get(zone);
  if (byHour === undefined) {
    byHour = new Map();
    hourOffsets.set(zone, byHour);
  }
  const known = byHour.get(hour);
  if (known !== undefined) return Number.isNaN(known) ? null : known;
  const offsetAt = (ms: number) => {
    const l = localDateTimeIcu(new Date(ms), zone);
    return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second) - ms;
  };
  // Offsets change at most once an hour (in practice twice a year): the same at the hour's first and last
  // second, it holds for the whole hour.
  const first = offsetAt(hour * HOUR_MS);
  const offset = first === offsetAt(hour * HOUR_MS + HOUR_MS - 1000) ? first : Number.NaN;
  if (byHour.size >= HOURS_KEPT) byHour.clear();
  byHour.set(hour, offset);
  return Number.isNaN(offset) ? null : offset;
}

/**
 * The local date and time of `instant` in `zone`. ICU's formatting costs microseconds a call, and a quote
 * or an order asks for many (the promise's times, each candidate's zone): the zone's offset is read from
 * ICU once per UTC hour, and the local time is the instant shifted by it.
 */
export function localDateTime(instant: Date, zone: string): LocalDateTime {
  const ms = instant.getTime();
  if (!Number.isFinite(ms)) return localDateTimeIcu(instant, zone);
  const offset = hourOffset(zone, Math.floor(ms / HOUR_MS));
  if (offset === null) return localDateTimeIcu(instant, zone);
  const local = new Date(Math.floor(ms / 1000) * 1000 + offset);
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    weekday: local.getUTCDay(),
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
