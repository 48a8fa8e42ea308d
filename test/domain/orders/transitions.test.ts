// The order state machine, checked exhaustively from its own table: every (status, action, role) the
// table allows leads where the table says; every other one is refused naming the current status.

import { describe, expect, it } from "vitest";
import {
  ACTIONS,
  allowedActions,
  holdsContractor,
  ORDER_STATUSES,
  ROLES,
  TERMINAL_STATUSES,
  TRANSITIONS,
  TransitionRefused,
  transition,
} from "../../../src/domain/orders/transitions.js";

describe("order lifecycle", () => {
  it("allows exactly the transitions in the table, for exactly the roles it names", () => {
    let allowed = 0;
    let refused = 0;
    for (const status of ORDER_STATUSES) {
      for (const action of ACTIONS) {
        for (const role of ROLES) {
          const rule = TRANSITIONS.find(
            (t) => t.action === action && t.from.includes(status) && t.by.includes(role),
          );
          if (rule) {
            expect(transition(status, action, role), `${status} ${action} by ${role}`).toBe(rule.to);
            allowed++;
          } else {
            let error: unknown;
            try {
              transition(status, action, role);
            } catch (e) {
              error = e;
            }
            expect(error, `${status} ${action} by ${role}`).toBeInstanceOf(TransitionRefused);
            expect((error as TransitionRefused).current).toBe(status);
            expect((error as Error).message).toContain(`The order is ${status}`);
            refused++;
          }
        }
      }
    }
    expect(allowed).toBeGreaterThan(20);
    expect(allowed + refused).toBe(ORDER_STATUSES.length * ACTIONS.length * ROLES.length);
  });

  it("follows the happy path from received to invoiced", () => {
    const path: Array<[Parameters<typeof transition>[1], Parameters<typeof transition>[2]]> = [
      ["offer", "system"],
      ["reoffer", "system"],
      ["accept", "contractor"],
      ["depart", "contractor"],
      ["arrive", "contractor"],
      ["complete", "contractor"],
      ["invoice", "contractor"],
    ];
    let status: (typeof ORDER_STATUSES)[number] = "received";
    for (const [action, role] of path) status = transition(status, action, role);
    expect(status).toBe("invoiced");
  });

  it("lets callers cancel only before the contractor is on site, and only dispatchers after", () => {
    for (const status of ["received", "offered", "accepted", "en_route", "needs_dispatcher"] as const) {
      expect(transition(status, "cancel", "caller")).toBe("cancelled");
    }
    expect(() => transition("on_site", "cancel", "caller")).toThrow(/The order is on_site/);
    expect(transition("on_site", "cancel", "dispatcher")).toBe("cancelled");
    expect(() => transition("offered", "accept", "caller")).toThrow(TransitionRefused);
    expect(() => transition("offered", "assign", "contractor")).toThrow(TransitionRefused);
  });

  it("ends in paid or cancelled, and every status is reachable from received", () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(["cancelled", "paid"]);
    const reached = new Set<string>(["received"]);
    for (let changed = true; changed; ) {
      changed = false;
      for (const t of TRANSITIONS) {
        if (t.from.some((f) => reached.has(f)) && !reached.has(t.to)) {
          reached.add(t.to);
          changed = true;
        }
      }
    }
    expect([...reached].sort()).toEqual([...ORDER_STATUSES].sort());
  });

  it("names what each role may do next, and which statuses hold a contractor's capacity", () => {
    expect(allowedActions("offered", "contractor")).toEqual(["accept", "counter"]);
    expect(allowedActions("invoiced", "dispatcher")).toEqual([]);
    expect(ORDER_STATUSES.filter(holdsContractor)).toEqual(["offered", "accepted", "en_route", "on_site"]);
  });
});
