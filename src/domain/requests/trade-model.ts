// The published keyword model that guesses a request's trade from its text (docs/customer-side.md,
// "Request form"). Pure and small on purpose: anyone can read why a request was guessed as it was.
//
// The text is lower-cased and cut into words (letters and digits). Each trade has a list of keywords,
// each with a weight: a keyword of one word matches a word that starts with it (leak: leaks, leaking),
// except keywords under four letters, which match a whole word only (ac, gas); a keyword of several words
// matches those words in a row. A trade's score is the sum of the weights of its keywords found, each
// keyword counted once. The confidence of the best trade is
//
//     best / (best + second + 1)
//
// (the 1 keeps one weak word from being certain, and a close second pulls it down). At or above
// TRADE_GUESS_THRESHOLD the model guesses that trade; below it, or with no keyword at all, it guesses
// nothing, and the request waits for a person whatever the account's policy.

import { TRADE_CODES, type TradeCode } from "../trades.js";

/** The least confidence for a guess. */
export const TRADE_GUESS_THRESHOLD = 0.6;

/** Each trade's keywords and their weights (3: names the trade's work; 2: strongly suggests it; 1: hints). */
export const TRADE_KEYWORDS: Readonly<Record<TradeCode, Readonly<Record<string, number>>>> = {
  plumbing: {
    plumb: 3,
    leak: 2,
    drip: 2,
    toilet: 3,
    sink: 2,
    faucet: 3,
    tap: 2,
    drain: 2,
    clog: 3,
    pipe: 2,
    "water heater": 3,
    sewer: 3,
    flood: 2,
    "no hot water": 3,
    urinal: 3,
    backflow: 3,
    water: 1,
  },
  electrical: {
    electric: 3,
    outlet: 3,
    socket: 2,
    breaker: 3,
    wiring: 3,
    wire: 2,
    spark: 3,
    power: 2,
    "no power": 3,
    light: 1,
    switch: 2,
    panel: 2,
    generator: 2,
    flicker: 2,
    shock: 2,
    fuse: 3,
  },
  hvac: {
    hvac: 3,
    ac: 3,
    "air conditioning": 3,
    "air conditioner": 3,
    heating: 3,
    heater: 1,
    furnace: 3,
    thermostat: 3,
    boiler: 3,
    vent: 2,
    duct: 3,
    "too hot": 2,
    "too cold": 2,
    cooling: 2,
    filter: 2,
    rooftop: 2,
    rtu: 3,
    "heat pump": 3,
  },
  appliance_repair: {
    fridge: 3,
    refrigerator: 3,
    freezer: 3,
    "ice machine": 3,
    dishwasher: 3,
    oven: 3,
    stove: 3,
    microwave: 3,
    washer: 2,
    dryer: 3,
    "washing machine": 3,
    appliance: 3,
    cooler: 2,
  },
  locksmith: {
    lock: 3,
    key: 2,
    deadbolt: 3,
    "key card": 3,
    badge: 2,
    safe: 2,
    "cannot open": 1,
  },
  roofing: {
    roof: 3,
    shingle: 3,
    gutter: 3,
    skylight: 3,
    "ceiling stain": 2,
    "water coming through": 2,
    downspout: 3,
  },
  pest_control: {
    pest: 3,
    mice: 3,
    mouse: 3,
    rat: 3,
    roach: 3,
    cockroach: 3,
    ant: 2,
    insect: 2,
    bug: 2,
    termite: 3,
    droppings: 3,
    wasp: 3,
    bees: 2,
    flies: 2,
  },
  handyman: {
    door: 2,
    hinge: 3,
    shelf: 3,
    shelves: 3,
    shelving: 3,
    drywall: 3,
    paint: 3,
    tile: 2,
    window: 2,
    sign: 2,
    signage: 2,
    cabinet: 2,
    hole: 2,
    broken: 1,
    fix: 1,
    mount: 2,
    ceiling: 1,
  },
};

export interface TradeGuess {
  /** The trade guessed, or null when the confidence is below the threshold (or no keyword matched). */
  trade: TradeCode | null;
  /** The best trade's confidence, 0 to 1 (three decimals); 0 when no keyword matched. */
  confidence: number;
  /** The best trade whatever its confidence (null: no keyword matched), and what matched, for the record. */
  best: TradeCode | null;
  matched: readonly string[];
}

/** The text's words: lower case, letters and digits. */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** The endings a one-word keyword matches with ("" is the word itself). */
const KEYWORD_ENDINGS = [
  "",
  "s",
  "es",
  "d",
  "ed",
  "ing",
  "er",
  "ers",
  "y",
  "al",
  "ian",
  "ged",
  "ging",
  "ped",
  "ping",
];

function matches(keyword: string, words: readonly string[], joined: string): boolean {
  if (keyword.includes(" ")) return joined.includes(` ${keyword} `);
  return words.some((w) => w.startsWith(keyword) && KEYWORD_ENDINGS.includes(w.slice(keyword.length)));
}

/** A trade's score in `text` and the keywords that made it. */
export function tradeScore(trade: TradeCode, text: string): { score: number; matched: string[] } {
  const words = wordsOf(text);
  const joined = ` ${words.join(" ")} `;
  const matched = Object.keys(TRADE_KEYWORDS[trade]).filter((k) => matches(k, words, joined));
  return { score: matched.reduce((sum, k) => sum + (TRADE_KEYWORDS[trade][k] ?? 0), 0), matched };
}

/** The model's guess for a request's text. */
export function guessTrade(text: string): TradeGuess {
  const scored = TRADE_CODES.map((trade) => ({ trade, ...tradeScore(trade, text) })).sort(
    (a, b) => b.score - a.score,
  );
  const [first, second] = scored;
  if (!first || first.score === 0) return { trade: null, confidence: 0, best: null, matched: [] };
  const confidence = Math.round((first.score / (first.score + (second?.score ?? 0) + 1)) * 1000) / 1000;
  return {
    trade: confidence >= TRADE_GUESS_THRESHOLD ? first.trade : null,
    confidence,
    best: first.trade,
    matched: first.matched,
  };
}
