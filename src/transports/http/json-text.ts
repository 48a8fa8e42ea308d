// JSON text read without the engine's object parser, for the bodies JSON.parse cannot be trusted with:
// those with a member name written with an escape (`"\u0061"`, `"\""`, `"\n"`).
//
// V8 12.8 to 14.6 (Node 24 and later) resolve an escaped member name through the map transition an
// earlier object with the same preceding names left behind, comparing raw source text: once any
// JSON.parse in the process has read `{"h":[],"\\":0}`, `JSON.parse('{"h":1,"\""':2}')` names its second
// member `\`, not `"` (nodejs/node#63785, open). A caller could plant that transition and change the
// names in every later caller's body of the same shape. Bodies without an escaped name (nearly all) still
// go to JSON.parse; the others, and only they, are read here: an iterative reader (nesting deeper than
// the call stack must not throw) that decodes each string token alone with JSON.parse, which builds no
// object and so meets no transition, and builds each object with defineProperty (a member "__proto__"
// stays a member, for the caller to refuse, as JSON.parse leaves it).

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BRACKET_OPEN = 0x5b;
const BRACKET_CLOSE = 0x5d;
const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BACKSLASH = 0x5c;

export const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The first index at or after `i` that is not JSON whitespace. */
function skipSpace(text: string, i: number): number {
  let j = i;
  while (j < text.length && isJsonSpace(text.charCodeAt(j))) j++;
  return j;
}

/** End (index of the closing quote) of the string token opening at `start`; text.length if unterminated. */
export function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    if (end === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Whether some member name in the text is written with an escape. Reads string tokens as JSON's lexer
 * does, so over any prefix JSON.parse would accept it sees the names JSON.parse would see.
 */
export function hasEscapedName(text: string): boolean {
  if (!text.includes("\\")) return false;
  for (let start = text.indexOf('"'); start !== -1; ) {
    const end = stringEnd(text, start);
    if (end >= text.length) return false;
    const escaped = text.lastIndexOf("\\", end) > start;
    if (escaped && text.charCodeAt(skipSpace(text, end + 1)) === COLON) return true;
    start = text.indexOf('"', end + 1);
  }
  return false;
}

/** Not JSON text: the caller answers as it does to JSON.parse's SyntaxError. */
class NotJson extends SyntaxError {}

type Frame = { array: unknown[] } | { object: Record<string, unknown>; name: string };

export type TextReading = { value: unknown } | { duplicate: { name: string; pointer: string } };

/** The JSON pointer (RFC 6901) of the value being read in the innermost frame. */
function pointerOf(frames: readonly Frame[]): string {
  let pointer = "";
  for (const f of frames) {
    const segment =
      "array" in f ? String(f.array.length) : f.name.replaceAll("~", "~0").replaceAll("/", "~1");
    pointer += `/${segment}`;
  }
  return pointer;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS: ReadonlyArray<[string, unknown]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];

/** A string, number or literal at `i`, and the index after it. */
function scalar(text: string, i: number): [unknown, number] {
  const c = text.charCodeAt(i);
  if (c === QUOTE) {
    const end = stringEnd(text, i);
    if (end >= text.length) throw new NotJson("unterminated string");
    return [JSON.parse(text.slice(i, end + 1)), end + 1];
  }
  NUMBER.lastIndex = i;
  const number = NUMBER.exec(text);
  if (number !== null) return [Number(number[0]), i + number[0].length];
  for (const [word, value] of LITERALS) if (text.startsWith(word, i)) return [value, i + word.length];
  throw new NotJson(`unexpected character at ${i}`);
}

/**
 * Reads the member name at `i` into the object frame on top; the index of its value, or the duplicate
 * when the object already has a member of that name.
 */
function memberName(text: string, i: number, frames: Frame[]): number | TextReading {
  const top = frames[frames.length - 1] as { object: Record<string, unknown>; name: string };
  if (text.charCodeAt(i) !== QUOTE) throw new NotJson(`a member name was expected at ${i}`);
  const [name, after] = scalar(text, i) as [string, number];
  top.name = name;
  if (Object.hasOwn(top.object, name)) return { duplicate: { name, pointer: pointerOf(frames) } };
  const colon = skipSpace(text, after);
  if (text.charCodeAt(colon) !== COLON) throw new NotJson(`a colon was expected at ${colon}`);
  return skipSpace(text, colon + 1);
}

function store(frame: Frame, value: unknown): void {
  if ("array" in frame) frame.array.push(value);
  else {
    Object.defineProperty(frame.object, frame.name, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}

/**
 * Opens the container at `i` (the caller saw `{` or `[`): the index of its first value, with its frame
 * pushed, or, for an empty one, the container itself and the index after it.
 */
function open(text: string, i: number, frames: Frame[]): number | TextReading | [unknown, number] {
  const object = text.charCodeAt(i) === BRACE_OPEN;
  const first = skipSpace(text, i + 1);
  if (text.charCodeAt(first) === (object ? BRACE_CLOSE : BRACKET_CLOSE)) {
    return [object ? {} : [], first + 1];
  }
  frames.push(object ? { object: {}, name: "" } : { array: [] });
  return object ? memberName(text, first, frames) : first;
}

/**
 * Stores a finished value in the frames above it, closing each container the text closes: the index of
 * the next value to read, or the whole value when the text ends.
 */
function place(text: string, value: unknown, i: number, frames: Frame[]): number | TextReading {
  let finished = value;
  let at = i;
  for (;;) {
    const top = frames[frames.length - 1];
    at = skipSpace(text, at);
    if (top === undefined) {
      if (at !== text.length) throw new NotJson(`unexpected text after the value at ${at}`);
      return { value: finished };
    }
    store(top, finished);
    const c = text.charCodeAt(at);
    if (c === COMMA) {
      const next = skipSpace(text, at + 1);
      return "array" in top ? next : memberName(text, next, frames);
    }
    if (c !== ("array" in top ? BRACKET_CLOSE : BRACE_CLOSE))
      throw new NotJson(`unexpected character at ${at}`);
    frames.pop();
    finished = "array" in top ? top.array : top.object;
    at++;
  }
}

/**
 * Reads JSON text as JSON.parse would (same values, same member order), stopping at the first member name
 * an object has twice. Throws SyntaxError for text that is not JSON.
 */
export function readJsonText(text: string): TextReading {
  const frames: Frame[] = [];
  let i = skipSpace(text, 0);
  for (;;) {
    const c = text.charCodeAt(i);
    let next: number | TextReading | [unknown, number];
    if (c === BRACE_OPEN || c === BRACKET_OPEN) next = open(text, i, frames);
    else next = scalar(text, i);
    if (Array.isArray(next)) next = place(text, next[0], next[1], frames);
    if (typeof next !== "number") return next;
    i = next;
  }
}
