// What of a decision is private in its audit record, and who is shown it: the one home of that rule.
//
// Three roles read records. The caller (the account the record belongs to) sees its own job, prices and
// statuses, and its handle (contractor_ref) of each contractor; the dispatch team sees everything; a
// contractor sees its own id where a record names it. Concretely, in any record's data:
// - `candidates` (the ranked contractors with their prices and scores): the dispatch team only;
// - a contractor named in `chosen`, `contractor_id`, `from_contractor` or `to_contractor`: its id is
//   shown to the dispatch team and to that contractor, and the account's handle of it (`chosen_ref`,
//   `contractor_ref`, `from_contractor_ref`, `to_contractor_ref`) to the caller;
// - a contractor acting (actor `contractor:<id>`) is sealed as actor `contractor`, with `actor_id` for
//   the dispatch team and that contractor and `actor_ref` for the caller.
// Everything else stays in the clear. Records without an account (the pool's, the keys') get no handles.

import { applyDisclosures, type DisclosureArray, disclosureDigest, newSalts, SD_ALG } from "./disclosure.js";

/** Who a disclosure is shown to besides the dispatch team, which is shown every disclosure. */
export type Audience = "caller" | `contractor:${string}`;

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

interface Claim {
  name: string;
  value: unknown;
  /** The audiences, as stored: comma separated, empty for the dispatch team only. */
  to: string;
}

export interface Redacted {
  actor: string;
  data: Record<string, unknown>;
  /** The disclosures as stored (one per line, see above); null when nothing is private. */
  disclosures: string | null;
}

/** Whether a member of a record's data is private (becomes disclosures), by the rule above. */
function isPrivate(name: string, value: unknown): boolean {
  return TEAM_ONLY.has(name) || (typeof value === "string" && Object.hasOwn(CONTRACTOR_FIELDS, name));
}

/** Splits a record's data into what is sealed in the clear and the disclosures, committed by digest. */
export function redact(actor: string, data: Record<string, unknown>, refOf: RefOf | null): Redacted {
  // Built without copying and deleting from `data`: a deleted member turns an object into a slow
  // dictionary, which the sealer then reads (this is on every quote's and order's path).
  let claims: Claim[] | null = null;
  for (const name in data) {
    const value = data[name];
    if (!isPrivate(name, value)) continue;
    claims ??= [];
    if (TEAM_ONLY.has(name)) {
      claims.push({ name, value, to: "" });
      continue;
    }
    claims.push({ name, value, to: `contractor:${value as string}` });
    if (refOf)
      claims.push({ name: CONTRACTOR_FIELDS[name] as string, value: refOf(value as string), to: "caller" });
  }
  let sealedActor = actor;
  if (actor.startsWith(CONTRACTOR_ACTOR)) {
    const id = actor.slice(CONTRACTOR_ACTOR.length);
    sealedActor = "contractor";
    claims ??= [];
    claims.push({ name: "actor_id", value: id, to: `contractor:${id}` });
    if (refOf) claims.push({ name: "actor_ref", value: refOf(id), to: "caller" });
  }
  if (claims === null) return { actor, data, disclosures: null };
  const salts = newSalts(claims.length);
  const lines: string[] = [];
  const digests: string[] = [];
  for (let i = 0; i < claims.length; i++) {
    const claim = claims[i] as Claim;
    const json = JSON.stringify([salts[i], claim.name, claim.value] as DisclosureArray);
    lines.push(`${claim.to}\t${json}`);
    digests.push(disclosureDigest(encodeJson(json)));
  }
  digests.sort();
  // Members in sorted order ("_sd" and "_sd_alg" sort before the lower-case names records use), so that
  // the sealer's canonical JSON takes the object as it is instead of copying it sorted.
  let names = Object.keys(data);
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as string) >= (names[i] as string)) {
      names = names.sort();
      break;
    }
  }
  const sealed: Record<string, unknown> = { _sd: digests, _sd_alg: SD_ALG };
  for (const name of names) {
    const value = data[name];
    if (!isPrivate(name, value)) sealed[name] = value;
  }
  return { actor: sealedActor, data: sealed, disclosures: lines.join("\n") };
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
