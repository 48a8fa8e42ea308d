// The request form's pure rules (domain/requests/): the published keyword model (what it guesses, with
// what confidence, and when it guesses nothing), the duplicate rule and what the account's policy decides.

import { describe, expect, it } from "vitest";
import {
  duplicateOf,
  formText,
  intakeDecision,
  isOpenOrder,
  orderDescription,
} from "../../src/domain/requests/request.js";
import {
  guessTrade,
  TRADE_GUESS_THRESHOLD,
  TRADE_KEYWORDS,
  tradeScore,
} from "../../src/domain/requests/trade-model.js";
import { TRADE_CODES } from "../../src/domain/trades.js";

describe("the keyword trade model", () => {
  it.each([
    ["Water leaking under the sink, toilet clogged", "plumbing"],
    ["The breaker keeps tripping and an outlet sparks", "electrical"],
    ["AC not cooling, thermostat shows 85", "hvac"],
    ["Walk-in freezer is warm and the ice machine stopped", "appliance_repair"],
    ["Front door deadbolt jammed, cannot lock the store", "locksmith"],
    ["Roof leaks by the skylight, gutter hanging off", "roofing"],
    ["Mouse droppings behind the shelves and roaches", "pest_control"],
    ["Drywall hole and a loose hinge on the office cabinet", "handyman"],
  ] as const)("guesses %s as %s", (text, trade) => {
    const guess = guessTrade(text);
    expect(guess.trade).toBe(trade);
    expect(guess.confidence).toBeGreaterThanOrEqual(TRADE_GUESS_THRESHOLD);
  });

  it("computes the published confidence: best / (best + second + 1)", () => {
    // plumbing: leak 2 + sink 2 = 4; nothing else: 4 / (4 + 0 + 1).
    expect(tradeScore("plumbing", "leaking sink")).toEqual({ score: 4, matched: ["leak", "sink"] });
    expect(guessTrade("leaking sink").confidence).toBe(0.8);
    // One weak word alone is not enough: water 1 -> 1 / 2.
    const weak = guessTrade("water");
    expect(weak).toMatchObject({ trade: null, best: "plumbing", confidence: 0.5 });
  });

  it("guesses nothing for text it cannot place, or a close call between two trades", () => {
    expect(guessTrade("Something is not right here")).toEqual({
      trade: null,
      confidence: 0,
      best: null,
      matched: [],
    });
    // locksmith: lock 3; handyman: door 2 -> 3 / 6 = 0.5.
    expect(guessTrade("door lock").trade).toBeNull();
  });

  it("matches whole words and the listed endings only, without case", () => {
    expect(tradeScore("plumbing", "PLUMBER needed").matched).toEqual(["plumb"]);
    expect(tradeScore("roofing", "rooftop unit").score).toBe(0);
    expect(tradeScore("hvac", "the back door").score).toBe(0);
    expect(tradeScore("hvac", "the AC is off").matched).toEqual(["ac"]);
  });

  it("has keywords for every trade, weights 1 to 3, one-word ones matching no other of their trade's", () => {
    for (const trade of TRADE_CODES) {
      const words = Object.entries(TRADE_KEYWORDS[trade]);
      expect(words.length).toBeGreaterThan(3);
      for (const [word, weight] of words) {
        expect([1, 2, 3]).toContain(weight);
        // A one-word keyword alone scores its own weight (no other keyword of the trade also matches it);
        // a phrase adds its weight to its words'.
        const { score } = tradeScore(trade, word);
        if (word.includes(" ")) expect(score, `${trade}: ${word}`).toBeGreaterThanOrEqual(weight);
        else expect(score, `${trade}: ${word}`).toBe(weight);
      }
    }
  });
});

describe("request rules", () => {
  const order = (
    id: string,
    trade: "plumbing" | "hvac",
    status: "accepted" | "completed" | "cancelled",
    at: string,
  ) => ({ id, trade, status, createdAt: at }) as const;

  it("links to the newest open order of the same trade, never a closed one or another trade's", () => {
    const orders = [
      order("ord_a", "plumbing", "accepted", "2026-11-01T00:00:00Z"),
      order("ord_b", "plumbing", "accepted", "2026-11-02T00:00:00Z"),
      order("ord_c", "plumbing", "completed", "2026-11-03T00:00:00Z"),
      order("ord_d", "hvac", "accepted", "2026-11-04T00:00:00Z"),
    ];
    expect(duplicateOf(orders, "plumbing")?.id).toBe("ord_b");
    expect(
      duplicateOf(
        [
          order("ord_c", "plumbing", "completed", "2026-11-03T00:00:00Z"),
          order("ord_e", "plumbing", "cancelled", "2026-11-05T00:00:00Z"),
        ],
        "plumbing",
      ),
    ).toBeNull();
    expect(isOpenOrder("cannot_complete")).toBe(true);
    expect(isOpenOrder("invoiced")).toBe(false);
  });

  it("holds under hold, and under create when the model guessed nothing", () => {
    const sure = guessTrade("toilet clogged");
    expect(intakeDecision("create", sure)).toEqual({ kind: "create", trade: "plumbing" });
    expect(intakeDecision("hold", sure).kind).toBe("hold");
    expect(intakeDecision("create", guessTrade("door lock"))).toMatchObject({
      kind: "hold",
      reason: expect.stringMatching(/below the threshold/),
    });
    expect(intakeDecision("create", guessTrade("hello"))).toMatchObject({
      kind: "hold",
      reason: expect.stringMatching(/No trade/),
    });
  });

  it("keeps markup as typed, and names the reporter in the order's description", () => {
    expect(formText("  <b>hi</b>\r\nthere ")).toBe("<b>hi</b>\nthere");
    const text = orderDescription("wrq_1", {
      description: "<script>x</script>",
      reporterName: "Sam",
      reporterContact: "555",
      source: "form",
    });
    expect(text).toBe("<script>x</script>\n\nReported by Sam (555) through the site's request form (wrq_1).");
  });
});
