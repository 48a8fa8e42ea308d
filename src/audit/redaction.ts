// What of a decision is private in its audit record, and who is shown it: the one home of that rule.
//
// Three roles read records. The caller (the account the record belongs to) sees its own job, prices and
// statuses, and its handle (contractor_ref) of each contractor; the dispatch team sees everything; a
// contractor sees its own id where a record names it, and of the caller only what the job needs.
// Concretely, in any record's data:
// - `candidates` (the ranked contractors with their prices and scores): the dispatch team only;
// - a contractor named in `chosen`, `contractor_id`, `from_contractor` or `to_contractor`: its id is
//   shown to the dispatch team and to that contractor, and the account's handle of it (`chosen_ref`,
//   `contractor_ref`, `from_contractor_ref`, `to_contractor_ref`) to the caller;
// - a contractor acting (actor `contractor:<id>`) is sealed as actor `contractor`, with `actor_id` for
//   the dispatch team and that contractor and `actor_ref` for the caller;
// - the caller's contact details and its own bookkeeping (CALLER_ONLY: an order's callback_url,
//   reference_id and idempotency_key, the site's address and name, and a site's contact in its records):
//   the caller and the dispatch team.
//   A contractor reads an order's creation as the job it was offered: trade, description, urgency, NTE,
//   service window, state, city and zip, what its offer shows; the address and the site's name reach the
//   contractor that accepts the job through its job (contractor.jobs), not through the log.
// Everything else stays in the clear. Records without an account (the pool's, the keys') get no handles.
// A member inside a nested object (the order's `input`) is committed in that object's own `_sd`, as
// SD-JWT does (RFC 9901, section 4.2.4.1), so the rest of the object stays readable to every role.

import { applyDisclosures, type DisclosureArray, disclosureDigest, newSalts, SD_ALG } from "./disclosure.js";

/** An account's handle of a contractor id. */
export type RefOf = (contractorId: string) => string;

// Disclosures are stored beside their record as text, one per line: the audiences it is for, comma
// separated (none: the dispatch team only), a tab, and the disclosure's JSON exactly as encoded (JSON text
// never holds a raw newline or tab). It is kept as JSON rather than base64url (a third smaller, and the
// candidates make most of a quote's row); a reader is given base64url(utf8(json)), whose digest the record
// holds.

/** Who reads a record: the caller, the dispatch team, or one contractor. */
export type Reader =
  | { role: "caller" }
  | { role: "dispatcher" }
  | { role: "contractor"; contractorId: string };

const TEAM_ONLY = new Set(["candidates"]);
const CONTRACTOR_FIELDS: Record<string, string> = {
  chosen: "chosen_ref",
  contractor_id: "contractor_ref",
  from_contractor: "from_contractor_ref",
  to_contractor: "to_contractor_ref",
};
const CONTRACTOR_ACTOR = "contractor:";

/** Members by name: `true` for a member that is private whatever its value, or the rule inside an object. */
type Fields = { readonly [name: string]: true | Fields };

/** The caller's contact details and bookkeeping, wherever a record holds them (see above). */
const CALLER_ONLY: Fields = {
  callback_url: true,
  idempotency_key: true,
  reference_id: true,
  input: { callback_url: true, reference_id: true, location: { address: true, name: true } },
  // Where a photo says it was taken (an attachment's EXIF GPS): the account's and the dispatch team's.
  captured_position: true,
  // A site's contact (sites' records): the account's and the dispatch team's.
  site: { contact: true },
};

interface Claim {
  name: string;
  value: unknown;
  /** The audiences, as stored: comma separated, empty for the dispatch team only. */
  to: string;
  /** The `_sd` of the object the claim is committed in (filled once every claim has its salt). */
  digests: string[];
}

export interface Redacted {
  actor: string;
  data: Record<string, unknown>;
  /** The disclosures as stored (one per line, see above); null when nothing is private. */
  disclosures: string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether a member of a record's data is itself private (becomes disclosures), by the rule above. */
function isPrivate(name: string, value: unknown): boolean {
  return (
    TEAM_ONLY.has(name) ||
    (typeof value === "string" && Object.hasOwn(CONTRACTOR_FIELDS, name)) ||
    (CALLER_ONLY[name] === true && value !== undefined)
  );
}

/**
 * An object of a record's data with its caller-only members (by `fields`) taken out as claims for the
 * caller, committed in its own `_sd`; the object itself when nothing in it is private.
 */
function commitNested(
  obj: Record<string, unknown>,
  fields: Fields,
  claims: Claim[],
): Record<string, unknown> {
  let digests: string[] | null = null;
  let changed = false;
  const kept: Record<string, unknown> = {};
  for (const name of Object.keys(obj).sort()) {
    const value = obj[name];
    const rule = fields[name];
    if (rule === true && value !== undefined) {
      digests ??= [];
      claims.push({ name, value, to: "caller", digests });
      changed = true;
    } else if (rule !== undefined && rule !== true && isObject(value)) {
      const inner = commitNested(value, rule, claims);
      changed ||= inner !== value;
      kept[name] = inner;
    } else kept[name] = value;
  }
  if (!changed) return obj;
  return digests === null ? kept : { _sd: digests, ...kept };
}

/** Splits a record's data into what is sealed in the clear and the disclosures, committed by digest. */
export function redact(actor: string, data: Record<string, unknown>, refOf: RefOf | null): Redacted {
  // Built without copying and deleting from `data`: a deleted member turns an object into a slow
  // dictionary, which the sealer then reads (this is on every quote's and order's path).
  const claims: Claim[] = [];
  const top: string[] = [];
  let nested: Map<string, Record<string, unknown>> | null = null;
  for (const name in data) {
    const value = data[name];
    const callerOnly = CALLER_ONLY[name];
    if (callerOnly !== undefined && callerOnly !== true && isObject(value)) {
      const committed = commitNested(value, callerOnly, claims);
      if (committed !== value) {
        nested ??= new Map();
        nested.set(name, committed);
      }
    } else if (!isPrivate(name, value)) continue;
    else if (TEAM_ONLY.has(name)) claims.push({ name, value, to: "", digests: top });
    else if (callerOnly === true) claims.push({ name, value, to: "caller", digests: top });
    else {
      claims.push({ name, value, to: `contractor:${value as string}`, digests: top });
      if (refOf) {
        const ref = CONTRACTOR_FIELDS[name] as string;
        claims.push({ name: ref, value: refOf(value as string), to: "caller", digests: top });
      }
    }
  }
  let sealedActor = actor;
  if (actor.startsWith(CONTRACTOR_ACTOR)) {
    const id = actor.slice(CONTRACTOR_ACTOR.length);
    sealedActor = "contractor";
    claims.push({ name: "actor_id", value: id, to: `contractor:${id}`, digests: top });
    if (refOf) claims.push({ name: "actor_ref", value: refOf(id), to: "caller", digests: top });
  }
  if (claims.length === 0) return { actor, data, disclosures: null };
  // Members in sorted order ("_sd" and "_sd_alg" sort before the lower-case names records use), so that
  // the sealer's canonical JSON takes the object as it is instead of copying it sorted.
  let names = Object.keys(data);
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as string) >= (names[i] as string)) {
      names = names.sort();
      break;
    }
  }
  const sealed: Record<string, unknown> = { _sd: top, _sd_alg: SD_ALG };
  for (const name of names) {
    const value = data[name];
    if (!isPrivate(name, value)) sealed[name] = nested?.get(name) ?? value;
  }
  const salts = newSalts(claims.length);
  const lines: string[] = [];
  for (let i = 0; i < claims.length; i++) {
    const claim = claims[i] as Claim;
    const json = JSON.stringify([salts[i], claim.name, claim.value] as DisclosureArray);
    lines.push(`${claim.to}\t${json}`);
    claim.digests.push(disclosureDigest(encodeJson(json)));
  }
  top.sort();
  if (nested !== null) for (const claim of claims) if (claim.digests !== top) claim.digests.sort();
  return { actor: sealedActor, data: sealed, disclosures: lines.join("\n") };
}

/**
 * Whether sealed data holds any of the caller's contact details in the clear (a record sealed before they
 * became disclosures): such a record is not shown to a contractor. Null stands for nothing.
 */
export function holdsCallerDetails(data: Record<string, unknown>, fields: Fields = CALLER_ONLY): boolean {
  for (const name in fields) {
    const rule = fields[name];
    const value = data[name];
    if (
      rule === true
        ? value !== undefined && value !== null
        : isObject(value) && holdsCallerDetails(value, rule)
    )
      return true;
  }
  return false;
}

/** The encoded disclosures of a record that `reader` may see. */
export function disclosuresFor(stored: string | null, reader: Reader): string[] {
  if (stored === null) return [];
  const audience =
    reader.role === "caller"
      ? "caller"
      : reader.role === "contractor"
        ? `contractor:${reader.contractorId}`
        : null;
  const out: string[] = [];
  for (const line of stored.split("\n")) {
    const tab = line.indexOf("\t");
    if (audience === null || line.slice(0, tab).split(",").includes(audience))
      out.push(encodeJson(line.slice(tab + 1)));
  }
  return out;
}

/** base64url(UTF-8 of a disclosure's JSON): its encoded form. */
function encodeJson(json: string): string {
  return Buffer.from(json, "utf8").toString("base64url");
}

/** How many digests `value` commits: the entries of every `_sd` in it, at any depth. */
function committedDigests(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let count = 0;
  if (!Array.isArray(value)) {
    const sd = (value as Record<string, unknown>)._sd;
    if (Array.isArray(sd)) count += sd.length;
  }
  for (const member of Object.values(value)) count += committedDigests(member);
  return count;
}

/**
 * What is wrong with a stored record's disclosures, or null when nothing is: each one is committed in the
 * record (its digest in an `_sd` of the sealed data, given once, naming no member the record has), and
 * each digest the record commits has its disclosure. `audit check` runs it on every record.
 */
export function disclosureProblem(row: { record: string; disclosures: string | null }): string | null {
  let data: Record<string, unknown>;
  try {
    data = (JSON.parse(row.record) as { data: Record<string, unknown> }).data;
  } catch {
    return "the record is not JSON";
  }
  const all = disclosuresFor(row.disclosures, { role: "dispatcher" });
  const checked = applyDisclosures(data, all);
  if (!checked.ok) return checked.reason;
  const committed = committedDigests(data);
  if (committed !== all.length) {
    return `the record commits ${committed} digests, and ${all.length} disclosures are stored beside it`;
  }
  return null;
}

/**
 * A stored record read with every disclosure applied, as the dispatch team reads it: its data in full,
 * and the actor as it was before sealing (`contractor:<id>` for a contractor). Throws if a disclosure
 * does not match the record.
 */
export function openRecord(row: { record: string; disclosures: string | null; actor: string }): {
  actor: string;
  data: Record<string, unknown>;
} {
  const sealed = JSON.parse(row.record) as { data: Record<string, unknown> };
  const checked = applyDisclosures(sealed.data, disclosuresFor(row.disclosures, { role: "dispatcher" }));
  if (!checked.ok) throw new Error(checked.reason);
  const actor =
    row.actor === "contractor" && typeof checked.claims.actor_id === "string"
      ? `${CONTRACTOR_ACTOR}${checked.claims.actor_id}`
      : row.actor;
  return { actor, data: checked.claims };
}
