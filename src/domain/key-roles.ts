// The roles of an account's keys (issue 33): what a person or a program holding the key may decide for the
// account. Pure. A key without a role set is an admin (every key issued before roles existed kept its
// powers); `dispatch.key_role_set` (an admin key) and `npm run cli -- keys role` set them.
//
//   requester: quotes, orders and their reading, cancellations, attachments: the account's daily work;
//              no decision over money (invoices, NTE increases) and no account settings.
//   approver:  a requester that also decides invoices and NTE increases, each up to its approval limit
//              in cents (no limit set: any amount), and records payments of approved invoices.
//   admin:     everything, without a limit, and the account's settings (key roles, the invoice policy).

export const KEY_ROLES = ["requester", "approver", "admin"] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

/** The role of a key without one set. */
export const DEFAULT_KEY_ROLE: KeyRole = "admin";

const RANK: Readonly<Record<KeyRole, number>> = { requester: 0, approver: 1, admin: 2 };

/** Whether `role` has at least the powers of `needed`. */
export function hasRole(role: KeyRole, needed: KeyRole): boolean {
  return RANK[role] >= RANK[needed];
}

/** The most `role` with `limitCents` may approve: null for no limit (an admin, or an approver without
 * one), 0 for a requester. */
export function approvalLimit(role: KeyRole, limitCents: number | null): number | null {
  if (role === "admin") return null;
  if (role === "requester") return 0;
  return limitCents;
}

/** Whether an amount is within the key's approval limit. */
export function withinApprovalLimit(role: KeyRole, limitCents: number | null, cents: number): boolean {
  const limit = approvalLimit(role, limitCents);
  return limit === null || cents <= limit;
}
