// The text every operation takes, whatever its schema says of the field: no C0 control character other
// than tab, line feed and carriage return, and no lone surrogate. PostgreSQL refuses NUL in text outright
// and SQLite would keep it; a lone surrogate comes back from either store as U+FFFD, unlike what the
// audit record sealed. Checked once here, for every string of every input, on every transport, so both
// stores keep exactly what was sent and no store decides what a caller may send.

import type { FieldError } from "../../errors.js";

// Tab (09), line feed (0A) and carriage return (0D) are text; the rest of U+0000-U+001F is not.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;

/** At most this many fields are reported: a body of ten thousand bad strings gets a short answer. */
const MAX_REPORTED = 10;

interface Pending {
  value: unknown;
  key: string | number | null;
  parent: Pending | null;
}

/** A field nested deeper than this is named by its first segments (a body may nest thousands deep). */
const MAX_SEGMENTS = 32;

function fieldOf(at: Pending): string {
  const path: string[] = [];
  for (let p: Pending | null = at; p !== null && p.key !== null; p = p.parent) path.push(String(p.key));
  path.reverse();
  return path.length > MAX_SEGMENTS ? `${path.slice(0, MAX_SEGMENTS).join(".")}...` : path.join(".");
}

function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function problemOf(text: string): string | null {
  const control = CONTROL.exec(text);
  if (control !== null) {
    return `must not contain control characters other than tab, line feed and carriage return (found ${codePoint(control[0])})`;
  }
  if (!text.isWellFormed()) return "must be valid Unicode text (found a lone surrogate)";
  return null;
}

const isBad = (text: string) => CONTROL.test(text) || !text.isWellFormed();

/** Whether any string in a value is bad: the common answer, no, found without building any path. */
function anyBad(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      if (isBad(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === "object" && value !== null) {
      for (const key in value) pending.push((value as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/**
 * The fields of a raw input (before its schema parses it) holding text the service does not store, named
 * as validation errors name fields (`location.city`). Iterative: a parsed body may nest deeper than the
 * call stack.
 */
export function textErrors(raw: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!anyBad(raw)) return errors;
  const pending: Pending[] = [{ value: raw, key: null, parent: null }];
  while (pending.length > 0 && errors.length < MAX_REPORTED) {
    const at = pending.pop() as Pending;
    const { value } = at;
    if (typeof value === "string") {
      const problem = problemOf(value);
      if (problem !== null) {
        const field = fieldOf(at) || "body";
        errors.push({ field, message: `${field} ${problem}` });
      }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], key: i, parent: at });
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        pending.push({ value: child, key, parent: at });
      }
    }
  }
  return errors;
}
