// RFC 8785 (JCS) canonical JSON: the form audit records are sealed in, and the fingerprint of an order
// body under an idempotency key (so key order does not matter).
//
// RFC 8785 defines strings and numbers by ECMAScript's JSON.stringify, and objects as their members
// sorted by UTF-16 code units. So for plain JSON values whose keys are not integer-like (JavaScript lists
// those first, whatever their insertion order), canonical JSON is JSON.stringify over the value with its
// objects' keys in sorted order. Records are built with their keys in that order already, so the common
// case is one walk to check the order and one JSON.stringify: no copy. Objects out of order are copied
// sorted; anything else (integer-like keys, non-plain objects) goes through `canonicalize`, by the RFC's
// author. One difference, documented: a string with a lone surrogate is written escaped (\udXXX) instead
// of refused.

import canonicalize from "canonicalize";

const INTEGER_KEY = /^(?:0|[1-9][0-9]*)$/;

class NeedsCanonicalize extends Error {}

/** `value` itself when every object in it already lists its keys in RFC 8785 order, else a sorted copy. */
function inOrder(value: unknown): unknown {
  if (typeof value !== "object" || value === null) {
    if (typeof value === "number" && !Number.isFinite(value))
      throw new Error("non-finite number has no JSON form");
    return value;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const c = v === undefined ? null : inOrder(v);
      if (copy === null && c !== v) copy = value.slice(0, i);
      copy?.push(c);
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new NeedsCanonicalize();
  const object = value as Record<string, unknown>;
  let previous: string | null = null;
  let sorted = true;
  let changed: Map<string, unknown> | null = null;
  for (const key in object) {
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57 && INTEGER_KEY.test(key)) throw new NeedsCanonicalize();
    if (previous !== null && !(previous < key)) sorted = false;
    previous = key;
    const v = object[key];
    if (v === undefined) continue; // JSON.stringify leaves it out, as canonical JSON must
    const c = inOrder(v);
    if (c !== v) {
      changed ??= new Map();
      changed.set(key, c);
    }
  }
  if (sorted && changed === null) return value;
  const out: Record<string, unknown> = Object.create(null); // a "__proto__" key stays a key
  for (const key of Object.keys(object).sort()) {
    const v = object[key];
    if (v !== undefined) out[key] = changed?.has(key) ? changed.get(key) : v;
  }
  return out;
}

export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(inOrder(value));
  } catch (error) {
    if (!(error instanceof NeedsCanonicalize)) throw error;
    text = canonicalize(value);
  }
  if (text === undefined) throw new Error("value has no JSON form");
  return text;
}
