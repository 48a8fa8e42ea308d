// Parses a request body as I-JSON (RFC 7493): UTF-8 only, no duplicate member names, no lone surrogates,
// no number beyond IEEE 754 double range. JSON.parse would quietly keep the last duplicate, turn 1e400
// into Infinity (sent on as null) and keep "\ud800", which the stores then change or refuse.
//
// Fast path, for the bodies every call sends: Buffer UTF-8 validation (native), JSON.parse, one pass over
// the parsed value (strings well-formed, numbers finite, members counted), and a count of the colons that
// follow a closing quote in the text. Every member has one such colon, so when the two counts agree no
// member was dropped as a duplicate. Only when they differ (a duplicate, or a string value holding `\":`)
// does a scanner walk the text to find the duplicate. A body with a member name written with an escape
// never reaches JSON.parse, which misreads such names on Node 24 (json-text.ts reads it). Hand-written: of the parsers in the registry list
// none reports duplicates without building a whole AST in JavaScript for every body.

import { isUtf8 } from "node:buffer";
import { ApiError } from "../../errors.js";
import { hasEscapedName, isJsonSpace, readJsonText, stringEnd } from "./json-text.js";

/** Longer pointers (a value nested thousands deep) are left out rather than sent back whole. */
const MAX_POINTER = 1024;

/** The problem with a body, where known with the JSON pointer (RFC 6901) of the value at fault. */
function invalid(problem: string, pointer?: string): ApiError {
  if (pointer !== undefined && pointer.length > MAX_POINTER) {
    return new ApiError("invalid_json", `The request body is not I-JSON: ${problem}, deep inside it.`);
  }
  const where = pointer === undefined ? "" : ` at ${pointer === "" ? "the top level" : pointer}`;
  return new ApiError("invalid_json", `The request body is not I-JSON: ${problem}${where}.`, {
    extra: pointer === undefined ? {} : { pointer },
  });
}

/** A JSON-text body parsed under I-JSON's rules; throws ApiError invalid_json naming what is wrong. */
export function parseIJson(body: Buffer): unknown {
  if (!isUtf8(body)) {
    throw invalid(`it is not valid UTF-8 (the first bad byte is at offset ${firstBadByte(body)})`);
  }
  let text = body.toString("utf8");
  // A byte order mark is not JSON text, but tolerated as Fastify's own parser did.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) {
    throw new ApiError("invalid_json", "The body is empty but Content-Type is application/json.");
  }
  return hasEscapedName(text) ? parseEscapedNames(text) : parseNative(text);
}

const notJson = () => new ApiError("invalid_json", "The request body is not valid JSON.");
const twice = (d: { name: string; pointer: string }) =>
  invalid(`member name ${JSON.stringify(d.name)} appears twice`, d.pointer);

/** Text whose member names are all written without escapes: JSON.parse, and the checks after it. */
function parseNative(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJson();
  }
  const members = inspect(value);
  if (members !== memberColons(text)) {
    const duplicate = findDuplicate(text);
    if (duplicate !== null) throw twice(duplicate);
  }
  return value;
}

/** Text with an escaped member name, which JSON.parse may misread (json-text.ts): read without it. */
function parseEscapedNames(text: string): unknown {
  let reading: ReturnType<typeof readJsonText>;
  try {
    reading = readJsonText(text);
  } catch {
    throw notJson();
  }
  if ("duplicate" in reading) throw twice(reading.duplicate);
  inspect(reading.value);
  return reading.value;
}

/** What is wrong with one value by itself, or null. */
function fault(value: unknown): string | null {
  if (typeof value === "string") return value.isWellFormed() ? null : "a string holds a lone surrogate";
  if (typeof value === "number") {
    return Number.isFinite(value) ? null : "a number is beyond the IEEE 754 double range";
  }
  return null;
}

function keyFault(key: string): string | null {
  if (!key.isWellFormed()) return "a member name holds a lone surrogate";
  // Fastify's own parser refused it too: a member that becomes an object's prototype when copied.
  if (key === "__proto__") return 'the member name "__proto__" is not allowed';
  return null;
}

/**
 * Checks every string and number of a parsed value and counts its object members. Iterative: JSON.parse
 * accepts nesting deeper than the call stack.
 */
function inspect(root: unknown): number {
  let members = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null) {
      if (fault(value) !== null) throw locate(root);
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else {
      const object = value as Record<string, unknown>;
      for (const key in object) {
        members++;
        if (keyFault(key) !== null) throw locate(root);
        pending.push(object[key]);
      }
    }
  }
  return members;
}

interface Found {
  value: unknown;
  key: string | number | null;
  parent: Found | null;
}

function pointerOf(found: Found): string {
  const segments: string[] = [];
  for (let at: Found | null = found; at?.key != null; at = at.parent) {
    segments.push(String(at.key).replaceAll("~", "~0").replaceAll("/", "~1"));
  }
  return segments
    .reverse()
    .map((s) => `/${s}`)
    .join("");
}

/** The error for the first fault in a value inspect() found one in, with its pointer. */
function locate(root: unknown): ApiError {
  const pending: Found[] = [{ value: root, key: null, parent: null }];
  while (pending.length > 0) {
    const at = pending.pop() as Found;
    const { value } = at;
    if (typeof value !== "object" || value === null) {
      const problem = fault(value);
      if (problem !== null) return invalid(problem, pointerOf(at));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], key: i, parent: at });
    } else {
      const entries = Object.entries(value as Record<string, unknown>).reverse();
      for (const [key, child] of entries) {
        const problem = keyFault(key);
        if (problem !== null) return invalid(problem, pointerOf({ value: child, key, parent: at }));
        pending.push({ value: child, key, parent: at });
      }
    }
  }
  return invalid("a value is not allowed");
}

/**
 * Colons that follow a closing quote (past whitespace): one per member, plus one per `\":` inside a
 * string value (a quote inside a string is always escaped). Never fewer than the members the text has.
 */
function memberColons(text: string): number {
  let count = 0;
  for (let i = text.indexOf(":"); i !== -1; i = text.indexOf(":", i + 1)) {
    let j = i - 1;
    while (j >= 0 && isJsonSpace(text.charCodeAt(j))) j--;
    if (text.charCodeAt(j) === 0x22) count++;
  }
  return count;
}

type Frame = { names: Set<string>; key: string | null; expectName: boolean } | { index: number };

/** The first member name that appears twice in one object of valid JSON text, with its pointer. */
function findDuplicate(text: string): { name: string; pointer: string } | null {
  const frames: Frame[] = [];
  const pointer = () =>
    frames
      .map((f) => `/${"index" in f ? f.index : String(f.key).replaceAll("~", "~0").replaceAll("/", "~1")}`)
      .join("");
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (c === 0x7b) frames.push({ names: new Set(), key: null, expectName: true });
    else if (c === 0x5b) frames.push({ index: 0 });
    else if (c === 0x7d || c === 0x5d) frames.pop();
    else if (c === 0x2c && top !== undefined) {
      if ("index" in top) top.index++;
      else top.expectName = true;
    } else if (c === 0x22) {
      const end = stringEnd(text, i);
      if (top !== undefined && !("index" in top) && top.expectName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        top.key = name;
        top.expectName = false;
        if (top.names.has(name)) return { name, pointer: pointer() };
        top.names.add(name);
      }
      i = end;
    }
  }
  return null;
}

/** Offset of the first byte that does not begin a valid UTF-8 sequence (the body is known to have one). */
function firstBadByte(body: Buffer): number {
  let i = 0;
  while (i < body.length) {
    const b = body[i] as number;
    const length = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
    if (length === 0 || i + length > body.length || !isUtf8(body.subarray(i, i + length))) return i;
    i += length;
  }
  return -1;
}
