// The reference_id a plan's generated order carries (`<plan_id>/<occurrence_key>`, generate.ts) is what the
// console and dispatch.schedule_lanes read planned work from; anything else is reactive work.

import { describe, expect, it } from "vitest";
import { isPlannedReference } from "../../../src/domain/maintenance/plan.js";

describe("isPlannedReference", () => {
  it("is a plan's id and an occurrence's date, nothing else", () => {
    expect(isPlannedReference("mpl_0VberZOdAb12Cd34Ef56/2026-12-08")).toBe(true);
    for (const other of [
      null,
      undefined,
      "",
      "PO-1234",
      "mpl_0VberZOdAb12Cd34Ef56",
      "mpl_0VberZOdAb12Cd34Ef56/2026-12-8",
      "mpl_/2026-12-08",
      "ord_0VberZOdAb12Cd34Ef56/2026-12-08",
      " mpl_0VberZOdAb12Cd34Ef56/2026-12-08",
    ]) {
      expect(isPlannedReference(other), String(other)).toBe(false);
    }
  });
});
