// The service-level clocks' rules on plain values: when the respond and arrive clocks are at risk (80 % of
// their time used with the step not done, or an ETA after the deadline) and breached (the deadline passed
// with the step not done, or done late), that each fires once, and that closed orders fire nothing.

import { describe, expect, it } from "vitest";
import type { CommandContext } from "../../../src/domain/orders/commands.js";
import {
  AT_RISK_SHARE,
  atRiskTime,
  dueFirings,
  fireSlaClock,
  type SlaOrder,
  slaClocks,
  slaStanding,
} from "../../../src/domain/orders/sla-clocks.js";
import { orderFixture } from "../../helpers/order-fixture.js";

const RECEIVED = "2026-11-23T10:00:00.000Z";
const at = (minutes: number) => new Date(Date.parse(RECEIVED) + minutes * 60_000);

/** An emergency order: respond in 15 minutes, arrive in 120. */
function emergency(overrides: Partial<SlaOrder> = {}): SlaOrder {
  return {
    status: "offered",
    received_at: RECEIVED,
    respond_by: at(15).toISOString(),
    arrive_by: at(120).toISOString(),
    window_start: null,
    window_end: null,
    first_accepted_at: null,
    eta_at: null,
    on_site_at: null,
    sla_respond_at_risk_at: null,
    sla_respond_breached_at: null,
    sla_arrive_at_risk_at: null,
    sla_arrive_breached_at: null,
    ...overrides,
  };
}

const summary = (order: SlaOrder, minutes: number) =>
  dueFirings(order, at(minutes)).map((f) => `${f.clock}:${f.kind}:${f.reason}`);

describe("the service-level clocks", () => {
  it("are at risk at 80 % of the time to respond_by with no acceptance, breached after it", () => {
    expect(AT_RISK_SHARE).toBe(0.8);
    const order = emergency();
    expect(summary(order, 11.9)).toEqual([]);
    // 80 % of 15 minutes is 12 minutes.
    expect(atRiskTime(slaClocks(order)[0] as never).toISOString()).toBe(at(12).toISOString());
    expect(summary(order, 12)).toEqual(["respond:at_risk:time_used"]);
    expect(summary(order, 15)).toEqual(["respond:at_risk:time_used"]);
    expect(summary(order, 15.01)).toEqual(["respond:breached:deadline_passed"]);
  });

  it("stop the respond clock at the first acceptance, and breach it if that came late", () => {
    expect(summary(emergency({ status: "accepted", first_accepted_at: at(10).toISOString() }), 30)).toEqual(
      [],
    );
    expect(summary(emergency({ status: "accepted", first_accepted_at: at(20).toISOString() }), 30)).toEqual([
      "respond:breached:done_late",
    ]);
  });

  it("put the arrive clock at risk at 96 of 120 minutes, or at once when the ETA is after arrive_by", () => {
    const accepted = emergency({ status: "en_route", first_accepted_at: at(5).toISOString() });
    expect(summary(accepted, 95)).toEqual([]);
    expect(summary(accepted, 96)).toEqual(["arrive:at_risk:time_used"]);
    const late = { ...accepted, eta_at: at(130).toISOString() };
    expect(summary(late, 20)).toEqual(["arrive:at_risk:eta_after_deadline"]);
    // An ETA within the deadline changes nothing.
    expect(summary({ ...accepted, eta_at: at(110).toISOString() }, 20)).toEqual([]);
    expect(summary(accepted, 121)).toEqual(["arrive:breached:deadline_passed"]);
    // On site in time: nothing, whenever it is asked.
    expect(summary({ ...accepted, status: "on_site", on_site_at: at(100).toISOString() }, 500)).toEqual([]);
  });

  it("run the arrive clock of windowed work over the window, start to end", () => {
    const windowed: SlaOrder = {
      ...emergency({ respond_by: null, arrive_by: null }),
      status: "accepted",
      window_start: at(24 * 60).toISOString(),
      window_end: at(24 * 60 + 240).toISOString(),
    };
    const [clock, ...others] = slaClocks(windowed);
    expect(others).toEqual([]);
    expect(clock?.clock).toBe("arrive");
    // 80 % of the 4-hour window: 192 minutes after its start.
    expect(summary(windowed, 24 * 60 + 191)).toEqual([]);
    expect(summary(windowed, 24 * 60 + 192)).toEqual(["arrive:at_risk:time_used"]);
    expect(summary(windowed, 24 * 60 + 241)).toEqual(["arrive:breached:deadline_passed"]);
  });

  it("fire each once: a stored risk is not fired again, a stored breach ends the clock", () => {
    const risked = emergency({ sla_respond_at_risk_at: at(12).toISOString() });
    expect(summary(risked, 13)).toEqual([]);
    expect(summary(risked, 16)).toEqual(["respond:breached:deadline_passed"]);
    expect(summary({ ...risked, sla_respond_breached_at: at(16).toISOString() }, 60)).toEqual([]);
    // A breach found without the risk before it: the risk is never reported after.
    expect(summary(emergency({ sla_respond_breached_at: at(16).toISOString() }), 17)).toEqual([]);
  });

  it("fire nothing on closed orders", () => {
    for (const status of ["completed", "invoiced", "cancelled", "cannot_complete"] as const) {
      expect(summary(emergency({ status }), 500)).toEqual([]);
    }
  });

  it("have none on an order whose promise was never stated", () => {
    expect(slaClocks(emergency({ respond_by: null, arrive_by: null }))).toEqual([]);
  });

  it("fire through the aggregate: no status move, the column set, an audit record and the event", () => {
    const order = orderFixture({ ...emergency(), id: "ord_1", account_id: "acct_1", version: 3 });
    const ctx: CommandContext = {
      now: at(13),
      unavailable: new Set(),
      sandboxPlayed: false,
      newId: (p) => `${p}_1`,
    };
    const decision = fireSlaClock({ order, offers: [] }, { actor: "system:sla" }, ctx);
    if (decision.kind !== "change") throw new Error(decision.message);
    expect(decision.patch).toEqual({ sla_respond_at_risk_at: at(13).toISOString() });
    expect(decision.after.status).toBe("offered");
    expect(decision.after.version).toBe(4);
    const sla = {
      clock: "respond",
      reason: "time_used",
      started_at: RECEIVED,
      deadline: at(15).toISOString(),
      time_allowed_minutes: 15,
      time_used_minutes: 13,
      time_used_percent: 86.7,
      eta_at: null,
    };
    expect(decision.audit).toEqual([
      {
        kind: "order.sla_at_risk",
        actor: "system:sla",
        at: at(13).toISOString(),
        data: { status: "offered", ...sla },
      },
    ]);
    expect(decision.event).toEqual({
      type: "order.sla_at_risk",
      at: at(13).toISOString(),
      details: { previous_status: null, sla },
    });
    const again = fireSlaClock({ order: decision.after, offers: [] }, { actor: "system:sla" }, ctx);
    expect(again.kind).toBe("refused");
  });
});

describe("where each clock stands (what the dispatch team's views show)", () => {
  const standings = (order: SlaOrder, minutes: number) =>
    slaStanding(order, at(minutes)).map((c) => `${c.clock}:${c.standing}`);

  it("on track, then at risk at 80 % of its time, then breached; met once its step is done in time", () => {
    expect(standings(emergency(), 5)).toEqual(["respond:on_track", "arrive:on_track"]);
    expect(standings(emergency(), 12)).toEqual(["respond:at_risk", "arrive:on_track"]);
    expect(standings(emergency(), 16)).toEqual(["respond:breached", "arrive:on_track"]);
    const accepted = emergency({ status: "accepted", first_accepted_at: at(10).toISOString() });
    expect(standings(accepted, 16)).toEqual(["respond:met", "arrive:on_track"]);
    // Its at-risk instant is the rule's: 80 % of the time to the deadline.
    expect(slaStanding(accepted, at(16))[1]?.atRiskAt.toISOString()).toBe(at(96).toISOString());
  });

  it("at risk as soon as the reported ETA is after the deadline; a stored firing stays reported", () => {
    const late = emergency({
      status: "en_route",
      first_accepted_at: at(5).toISOString(),
      eta_at: at(130).toISOString(),
    });
    expect(standings(late, 20)).toEqual(["respond:met", "arrive:at_risk"]);
    // Fired before, by a watch that read an ETA later moved: still at risk until the step is done.
    const fired = emergency({ sla_respond_at_risk_at: at(12).toISOString() });
    expect(standings(fired, 13)).toEqual(["respond:at_risk", "arrive:on_track"]);
    // Done late: breached, not met.
    const doneLate = emergency({ status: "accepted", first_accepted_at: at(20).toISOString() });
    expect(standings(doneLate, 25)).toEqual(["respond:breached", "arrive:on_track"]);
    expect(standings(emergency({ status: "completed" }), 200)).toEqual([]);
  });
});
