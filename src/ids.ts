// Identifiers with a type prefix (`ord_...`, `qte_...`): 20 base62 characters.
//
// Most are random (~119 bits). Rows written at the rate of requests (orders, quotes, audit seals) get
// time-ordered ids instead: 8 characters of the creation time in milliseconds, then random ones. Random
// keys land on a random page of every index that holds them, so each insert dirties (and each commit
// writes and syncs) a page of its own; time-ordered keys append, and a group commit's rows share pages.

import { base62, randomBase62 } from "./base62.js";

export type IdPrefix =
  | "acct"
  | "key"
  | "ord"
  | "prp"
  | "qte"
  | "ofr"
  | "nte"
  | "ctr"
  | "req"
  | "hold"
  | "msg"
  | "whe"
  | "whd"
  | "wha"
  | "whs"
  | "off"
  | "att"
  | "upl"
  | "clt"
  | "mpl"
  | "cli"
  | "dnd"
  | "ivd"
  | "site"
  | "ast"
  | "wrq"
  | "ntf"
  | "nev"
  | "nta";

export function newId(prefix: IdPrefix, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}

/** Base62 of the time in milliseconds, 8 characters: sorts in time order until the year 8888. */
export function timePrefix(ms = Date.now()): string {
  return base62(ms, 8);
}

/** A time-ordered id: 8 time characters, then `random` random ones (12 by default, ~71 bits). */
export function newSortableId(prefix: IdPrefix, random = 12): string {
  return `${prefix}_${timePrefix()}${randomBase62(random)}`;
}
