// Identifiers with a type prefix (`ord_...`, `qte_...`): 20 random base62 characters (~119 bits).

import { randomBase62 } from "./auth/api-key.js";

export type IdPrefix = "acct" | "key" | "ord" | "qte" | "ctr" | "req" | "hold";

export function newId(prefix: IdPrefix, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}
