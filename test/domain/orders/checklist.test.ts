// The checklist rules on plain values: each item kind's answers, which templates an order gets, a batch
// of answers (all faults named, re-sent answers accepted in any status, changes only on site), and the
// completion gate, alone and inside the contractor's completion.

import { describe, expect, it } from "vitest";
import {
  answerError,
  type ChecklistAnswer,
  type ChecklistItem,
  type ChecklistTemplate,
  completionRefusal,
  decideAnswers,
  fixChecklist,
  templatesFor,
} from "../../../src/domain/orders/checklist.js";
import { reportProgress } from "../../../src/domain/orders/commands.js";
import { orderFixture } from "../../helpers/order-fixture.js";

const yesNo: ChecklistItem = { item_id: "cli_y", label: "Water shut off", kind: "yes_no", required: true };
const pressure: ChecklistItem = {
  item_id: "cli_n",
  label: "Line pressure",
  kind: "number",
  required: true,
  unit: "psi",
  min: 20,
  max: 80,
};
const note: ChecklistItem = {
  item_id: "cli_t",
  label: "Notes",
  kind: "text",
  required: false,
  max_length: 5,
};
const photo: ChecklistItem = { item_id: "cli_p", label: "Repaired joint", kind: "photo", required: true };
const PHOTOS = new Set(["att_1"]);

function template(over: Partial<ChecklistTemplate>): ChecklistTemplate {
  return {
    id: "clt_x",
    livemode: true,
    accountId: null,
    trade: "plumbing",
    name: "t",
    replacesService: false,
    items: [yesNo],
    createdAt: "2026-11-01T00:00:00.000Z",
    createdBy: "operator:k",
    retiredAt: null,
    ...over,
  };
}

describe("an answer against its item", () => {
  it("takes a boolean for yes/no, and nothing else", () => {
    expect(answerError(yesNo, true, PHOTOS)).toBeNull();
    expect(answerError(yesNo, false, PHOTOS)).toBeNull();
    expect(answerError(yesNo, "yes", PHOTOS)).toMatch(/true or false/);
    expect(answerError(yesNo, 1, PHOTOS)).toMatch(/true or false/);
  });

  it("takes a number within the item's inclusive range, naming the bound and the unit", () => {
    expect(answerError(pressure, 20, PHOTOS)).toBeNull();
    expect(answerError(pressure, 80, PHOTOS)).toBeNull();
    expect(answerError(pressure, 19.9, PHOTOS)).toBe("must be at least 20 psi");
    expect(answerError(pressure, 81, PHOTOS)).toBe("must be at most 80 psi");
    expect(answerError(pressure, "50", PHOTOS)).toMatch(/a number/);
    expect(answerError(pressure, Number.NaN, PHOTOS)).toMatch(/a number/);
    expect(answerError({ ...pressure, min: null, max: null }, -1e9, PHOTOS)).toBeNull();
  });

  it("takes a text that is not blank and within max_length (counted in characters)", () => {
    expect(answerError(note, "ok", PHOTOS)).toBeNull();
    expect(answerError(note, "ééééé", PHOTOS)).toBeNull();
    expect(answerError(note, "🚿🚿🚿🚿🚿", PHOTOS)).toBeNull();
    expect(answerError(note, "toolong", PHOTOS)).toBe("must be at most 5 characters");
    expect(answerError(note, "   ", PHOTOS)).toBe("must not be empty");
    expect(answerError(note, true, PHOTOS)).toMatch(/a string/);
  });

  it("takes a photo item's answer as the id of a photo of the order", () => {
    expect(answerError(photo, "att_1", PHOTOS)).toBeNull();
    expect(answerError(photo, "att_2", PHOTOS)).toMatch(/no photo att_2 on this order/);
    expect(answerError(photo, true, PHOTOS)).toMatch(/attachment_id/);
  });
});

describe("the templates an order gets", () => {
  const order = { trade: "plumbing", account_id: "acct_a", livemode: true };

  it("are the service's of its trade and mode, then the account's own, oldest first; never a retired one", () => {
    const chosen = templatesFor(
      [
        template({ id: "clt_own", accountId: "acct_a", createdAt: "2026-11-02T00:00:00.000Z" }),
        template({ id: "clt_svc2", createdAt: "2026-11-03T00:00:00.000Z" }),
        template({ id: "clt_svc1" }),
        template({ id: "clt_other", accountId: "acct_b" }),
        template({ id: "clt_hvac", trade: "hvac" }),
        template({ id: "clt_test", livemode: false }),
        template({ id: "clt_old", retiredAt: "2026-11-04T00:00:00.000Z" }),
      ],
      order,
    );
    expect(chosen.map((t) => t.id)).toEqual(["clt_svc1", "clt_svc2", "clt_own"]);
  });

  it("are the account's alone when one of its templates replaces the service's", () => {
    const chosen = templatesFor(
      [template({ id: "clt_svc" }), template({ id: "clt_own", accountId: "acct_a", replacesService: true })],
      order,
    );
    expect(chosen.map((t) => t.id)).toEqual(["clt_own"]);
  });

  it("are copied into the order's checklist with the template each item came from", () => {
    const c = fixChecklist(
      "ord_1",
      [template({ id: "clt_a", items: [yesNo, pressure] })],
      "2026-11-05T00:00:00Z",
    );
    expect(c.templateIds).toEqual(["clt_a"]);
    expect(c.items.map((i) => [i.item_id, i.template_id])).toEqual([
      ["cli_y", "clt_a"],
      ["cli_n", "clt_a"],
    ]);
  });
});

const checklist = fixChecklist(
  "ord_1",
  [template({ items: [yesNo, pressure, note, photo] })],
  "2026-11-05T00:00:00Z",
);
const held = (itemId: string, value: ChecklistAnswer["value"]): ChecklistAnswer => ({
  orderId: "ord_1",
  itemId,
  value,
  answeredAt: "2026-11-05T01:00:00Z",
  answeredBy: "contractor:ctr_a",
  seal: "seal",
});

describe("a batch of answers", () => {
  it("names every answer at fault by its index: unknown item, repeated item, wrong value", () => {
    const decision = decideAnswers(
      checklist,
      [],
      [
        { item_id: "cli_y", value: true },
        { item_id: "cli_zzz", value: true },
        { item_id: "cli_n", value: 500 },
        { item_id: "cli_y", value: false },
      ],
      "on_site",
      PHOTOS,
    );
    expect(decision).toMatchObject({ kind: "refused", code: "validation_failed" });
    if (decision.kind !== "refused") return;
    expect(decision.errors).toEqual([
      { field: "answers.1.item_id", message: "no item cli_zzz on this job's checklist" },
      { field: "answers.2.value", message: "must be at most 80 psi" },
      { field: "answers.3.item_id", message: "cli_y is answered twice in this request" },
    ]);
  });

  it("on site, separates what changes from what the order holds already", () => {
    const decision = decideAnswers(
      checklist,
      [held("cli_y", true), held("cli_n", 30)],
      [
        { item_id: "cli_y", value: true },
        { item_id: "cli_n", value: 35 },
        { item_id: "cli_p", value: "att_1" },
      ],
      "on_site",
      PHOTOS,
    );
    expect(decision).toMatchObject({ kind: "answers", unchanged: 1 });
    if (decision.kind !== "answers") return;
    expect(decision.changed.map((c) => [c.item.item_id, c.value])).toEqual([
      ["cli_n", 35],
      ["cli_p", "att_1"],
    ]);
  });

  it("accepts answers the order holds already in any status (a replayed offline queue), a change only on site", () => {
    for (const status of ["en_route", "completed", "invoiced"]) {
      expect(
        decideAnswers(checklist, [held("cli_y", true)], [{ item_id: "cli_y", value: true }], status, PHOTOS),
      ).toEqual({ kind: "answers", changed: [], unchanged: 1 });
      expect(
        decideAnswers(checklist, [held("cli_y", true)], [{ item_id: "cli_y", value: false }], status, PHOTOS),
      ).toMatchObject({ kind: "refused", code: "invalid_transition", currentStatus: status });
    }
  });
});

describe("the completion gate", () => {
  const requirements = (answered: string[]) => ({
    checklist: { items: checklist.items, answered: new Set(answered) },
  });

  it("lets a job complete once every required item is answered, optional ones or not", () => {
    expect(completionRefusal(requirements(["cli_y", "cli_n", "cli_p"]))).toBeNull();
    expect(completionRefusal({ checklist: { items: [], answered: new Set() } })).toBeNull();
  });

  it("refuses with completion_requirements_unmet naming the required items unanswered, ids and labels, in order", () => {
    const refusal = completionRefusal(requirements(["cli_n", "cli_t"]));
    expect(refusal).toMatchObject({
      kind: "refused",
      code: "completion_requirements_unmet",
      extra: {
        unanswered: [
          { item_id: "cli_y", label: "Water shut off" },
          { item_id: "cli_p", label: "Repaired joint" },
        ],
      },
    });
    expect(refusal?.message).toContain('"Water shut off"');
    expect(refusal?.message).toContain('"Repaired joint"');
    const missing = (refusal?.extra?.missing ?? []) as Array<{ requirement: string }>;
    expect(missing.map((m) => m.requirement)).toEqual(["checklist_item", "checklist_item"]);
  });

  it("is run by the contractor's completion, after the status rule", () => {
    const order = orderFixture({ status: "on_site", contractor_id: "ctr_a" });
    const ctx = {
      now: new Date("2026-11-05T02:00:00Z"),
      unavailable: new Set<string>(),
      sandboxPlayed: false,
      newId: (p: string) => `${p}_1`,
    };
    const cmd = {
      orderId: order.id,
      contractor: { contractorId: "ctr_a", livemode: order.livemode },
      report: { status: "completed" as const, final_cost_cents: 1000 },
      actor: "contractor:ctr_a" as const,
    };
    const state = { order, offers: [] };
    expect(reportProgress(state, { ...cmd, completion: requirements(["cli_y"]) }, ctx)).toMatchObject({
      kind: "refused",
      code: "completion_requirements_unmet",
      currentStatus: "on_site",
    });
    expect(
      reportProgress(state, { ...cmd, completion: requirements(["cli_y", "cli_n", "cli_p"]) }, ctx),
    ).toMatchObject({ kind: "change", after: { status: "completed" } });
    // A job not yet on site is refused for its status, whatever its checklist.
    const enRoute = { order: { ...order, status: "en_route" as const }, offers: [] };
    expect(reportProgress(enRoute, { ...cmd, completion: requirements([]) }, ctx)).toMatchObject({
      code: "invalid_transition",
    });
  });
});
