// The schedule's drag and drop as the console decides it (console/src/views/schedule-drag.ts): a point on
// a lane as a start snapped to the quarter hour, what the console can tell before a drop, and the public
// operations a drop makes.

import { describe, expect, it } from "vitest";
import {
  type DragJob,
  type DropLane,
  fitAt,
  instantAt,
  laneTakes,
  nudge,
  planDrop,
} from "../../console/src/views/schedule-drag.js";

const DAY = { start: "2026-12-01T08:00:00.000Z", end: "2026-12-02T08:00:00.000Z" }; // a Pacific day
const t = (hhmm: string) => Date.parse(`2026-12-01T${hhmm}:00.000Z`);
const HOUR = 3_600_000;

const lane: DropLane = {
  contractor_id: "ctr_a",
  name: "Bay Plumbing Co",
  standing: "active",
  trades: ["plumbing"],
  day: DAY,
  working: [{ start: "2026-12-01T16:00:00.000Z", end: "2026-12-02T01:00:00.000Z" }], // 08:00-17:00 PST
  time_off: [{ start: "2026-12-01T20:00:00.000Z", end: "2026-12-01T21:00:00.000Z" }], // 12:00-13:00
  jobs: [{ order_id: "ord_held", start: "2026-12-01T22:00:00.000Z", end: "2026-12-02T00:00:00.000Z" }],
};

const job = (over: Partial<DragJob> = {}): DragJob => ({
  order_id: "ord_new",
  trade: "plumbing",
  urgency: "routine",
  label: "Plumbing · Oakland",
  durationMs: 2 * HOUR,
  window: { start: t("16:00"), end: t("20:00") },
  from: null,
  ...over,
});

describe("instantAt and nudge", () => {
  it("snaps a point to the quarter hour and keeps it on the day", () => {
    expect(instantAt(DAY, 0.5)).toBe(t("20:00"));
    expect(instantAt(DAY, 0.5 + 7 / (24 * 60))).toBe(t("20:00")); // 7 min later: still 20:00
    expect(instantAt(DAY, 0.5 + 8 / (24 * 60))).toBe(t("20:15"));
    expect(instantAt(DAY, -1)).toBe(Date.parse(DAY.start));
    expect(instantAt(DAY, 2)).toBe(Date.parse(DAY.end) - 15 * 60_000);
    // Held 30 min after its start, the block starts 30 min before the pointer.
    expect(instantAt(DAY, 0.5, 30 * 60_000)).toBe(t("19:30"));
  });

  it("moves by quarter hours within the day", () => {
    expect(nudge(DAY, t("20:00"), 1)).toBe(t("20:15"));
    expect(nudge(DAY, t("20:00"), -4)).toBe(t("19:00"));
    expect(nudge(DAY, Date.parse(DAY.start), -1)).toBe(Date.parse(DAY.start));
  });
});

describe("what the console can tell", () => {
  it("dims a lane without the trade or not active", () => {
    expect(laneTakes(lane, job()).ok).toBe(true);
    expect(laneTakes(lane, job({ trade: "hvac" }))).toMatchObject({ ok: false, why: "trade" });
    expect(laneTakes({ ...lane, standing: "inactive" }, job())).toMatchObject({ ok: false, why: "standing" });
  });

  it("says outside hours, time off or over another job", () => {
    expect(fitAt(lane, job(), t("16:00")).ok).toBe(true);
    expect(fitAt(lane, job(), t("15:00"))).toMatchObject({ ok: false, why: "outside_hours" });
    expect(fitAt(lane, job(), t("22:30"))).toMatchObject({ ok: false, why: "overlap" });
    expect(fitAt(lane, job(), t("19:00"))).toMatchObject({ ok: false, why: "time_off" });
    // The dragged job's own block is not in its way.
    expect(fitAt(lane, job({ order_id: "ord_held" }), t("22:30"))).toMatchObject({ ok: true });
  });
});

describe("the operations a drop makes", () => {
  const REASON = "Placed on the schedule board";

  it("assigns a queued order at the start, inside its window", () => {
    expect(planDrop(job(), "ctr_a", t("17:00"), REASON)).toEqual({
      steps: [
        {
          path: "/api/dispatcher/v1/orders/assign",
          body: {
            order_id: "ord_new",
            contractor_id: "ctr_a",
            start: new Date(t("17:00")).toISOString(),
            reason: REASON,
          },
        },
      ],
    });
  });

  it("moves a queued order's window to the start first when the start is outside it (same length)", () => {
    const plan = planDrop(job(), "ctr_a", t("21:00"), REASON);
    expect(plan).toMatchObject({
      steps: [
        {
          path: "/api/dispatcher/v1/orders/reschedule",
          body: {
            service_window: {
              start: new Date(t("21:00")).toISOString(),
              end: new Date(t("21:00") + 4 * HOUR).toISOString(),
            },
          },
        },
        { path: "/api/dispatcher/v1/orders/assign", body: { start: new Date(t("21:00")).toISOString() } },
      ],
    });
  });

  it("reschedules a block moved along its lane: the same window inside it, else a window from the start", () => {
    const held = job({ from: { contractor_id: "ctr_a", start: t("16:00") } });
    expect(planDrop(held, "ctr_a", t("17:30"), REASON)).toMatchObject({
      steps: [
        {
          path: "/api/dispatcher/v1/orders/reschedule",
          body: {
            service_window: {
              start: new Date(t("16:00")).toISOString(),
              end: new Date(t("20:00")).toISOString(),
            },
            start: new Date(t("17:30")).toISOString(),
          },
        },
      ],
    });
    expect(planDrop(held, "ctr_a", t("22:00"), REASON)).toMatchObject({
      steps: [{ body: { service_window: { start: new Date(t("22:00")).toISOString() } } }],
    });
    expect(planDrop(held, "ctr_a", t("16:00"), REASON)).toEqual({ steps: [] });
  });

  it("reassigns a block dropped on another lane; refuses what the API would not do or the console cannot send", () => {
    const held = job({ from: { contractor_id: "ctr_a", start: t("16:00") } });
    expect(planDrop(held, "ctr_b", t("18:00"), REASON)).toMatchObject({
      steps: [{ path: "/api/dispatcher/v1/orders/assign", body: { contractor_id: "ctr_b" } }],
    });
    expect(planDrop(held, "ctr_b", t("22:00"), REASON)).toMatchObject({
      refused: expect.stringMatching(/window/),
    });
    const urgent = job({
      urgency: "urgent",
      window: null,
      from: { contractor_id: "ctr_a", start: t("16:00") },
    });
    expect(planDrop(urgent, "ctr_a", t("18:00"), REASON)).toMatchObject({
      refused: expect.stringMatching(/urgent/),
    });
    expect(planDrop(job(), "ctr_a", t("17:00"), "  ")).toMatchObject({
      refused: expect.stringMatching(/why/),
    });
  });
});
