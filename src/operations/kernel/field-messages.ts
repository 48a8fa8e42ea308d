// The service's own wording of what a field must be, for every rule an input schema did not word itself
// (a bare `.positive()`, `z.iso.date()`, an enum): the error map every operation's input is parsed with
// (gate.ts `parseInput`), so that a 422 never shows zod's wording ("Too small: expected number to be >0",
// "Invalid ISO date"). A schema's own message always wins: this only fills the gaps.

import type { z } from "zod";

type RawIssue = z.core.$ZodRawIssue;

/** What a value of each zod type is, as a sentence says it. */
const KINDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  date: "a date",
  null: "null",
  literal: "the value the API reference gives",
};

/** What a text of each zod format is. */
const FORMATS: Record<string, string> = {
  date: "a date, YYYY-MM-DD (e.g. 2026-11-03)",
  datetime: "an RFC 3339 date-time with a UTC offset (e.g. 2026-11-03T09:00:00-05:00)",
  time: "a time of day, HH:MM or HH:MM:SS",
  duration: "an ISO 8601 duration (e.g. PT2H)",
  email: "an email address",
  url: "an absolute URL (https://...)",
  uuid: "a UUID",
};

/** "must be at least 3 characters long", "must be greater than 0", "must have at most 5 items": a bound as
 * the value's kind counts it. */
function boundRule(origin: unknown, limit: unknown, inclusive: unknown, least: boolean): string {
  const exclusive = inclusive === false;
  const n = Number(limit) + (exclusive && origin !== "number" ? (least ? 1 : -1) : 0);
  if (origin === "string") {
    if (least && n === 1) return "must not be empty";
    return `must be ${least ? "at least" : "at most"} ${n} character${n === 1 ? "" : "s"} long`;
  }
  if (origin === "array" || origin === "set") {
    return `must have ${least ? "at least" : "at most"} ${n} item${n === 1 ? "" : "s"}`;
  }
  if (exclusive) return `must be ${least ? "greater" : "less"} than ${n}`;
  return `must be ${least ? "at least" : "at most"} ${n}`;
}

function quoted(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
}

/** The message for one issue, naming the field by its path; undefined leaves zod's (never reached for
 * the codes inputs raise). */
export function fieldMessage(issue: RawIssue): string | undefined {
  const name = issue.path && issue.path.length > 0 ? issue.path.map(String).join(".") : "the value";
  const i = issue as RawIssue & Record<string, unknown>;
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return `${name} is required`;
      return `${name} must be ${KINDS[String(i.expected)] ?? String(i.expected)}`;
    case "too_small":
      return `${name} ${boundRule(i.origin, i.minimum, i.inclusive, true)}`;
    case "too_big":
      return `${name} ${boundRule(i.origin, i.maximum, i.inclusive, false)}`;
    case "invalid_format": {
      const format = String(i.format);
      if (format === "regex" && i.pattern !== undefined) return `${name} must match ${String(i.pattern)}`;
      return `${name} must be ${FORMATS[format] ?? `a valid ${format}`}`;
    }
    case "invalid_value": {
      const values = (i.values as readonly unknown[] | undefined) ?? [];
      return values.length === 1
        ? `${name} must be ${quoted(values)}`
        : `${name} must be one of: ${quoted(values)}`;
    }
    case "not_multiple_of":
      return `${name} must be a multiple of ${String(i.divisor)}`;
    case "invalid_union":
      return `${name} does not take any of the forms it may have (the API reference at /docs lists them)`;
    case "invalid_key":
      return `${name} has a key that is not allowed`;
    case "invalid_element":
      return `${name} has an element that is not allowed`;
    case "unrecognized_keys":
      return `unknown field(s): ${quoted((i.keys as readonly unknown[] | undefined) ?? [])}`;
    default:
      return undefined;
  }
}
