// Sites and assets, the pure rules: a site's ZIP in its state, its zone derived, its hours in the working
// hours' format; asset types per trade; a warranty in force on a day.

import { describe, expect, it } from "vitest";
import {
  ASSET_TYPE_LIST,
  ASSET_TYPES,
  checkAsset,
  checkSite,
  isAssetType,
  openingHoursOf,
  serialKey,
  sitePoint,
  warrantyInForce,
} from "../../../src/domain/sites/site.js";
import { TRADE_CODES } from "../../../src/domain/trades.js";

const FIELDS = {
  name: "Store #42",
  address: "500 Congress Ave",
  city: "Austin",
  state: "TX",
  zip: "78701",
  hours: "",
  accessNotes: null,
  contact: { name: null, phone: null, email: null },
};

describe("checkSite", () => {
  it("derives the zone from the state and ZIP and writes the hours canonically", () => {
    const checked = checkSite({ ...FIELDS, hours: "MON-FRI 07:00-21:00;sat 09:00-17:00" });
    expect(checked).toEqual({
      ok: true,
      state: "TX",
      timeZone: "America/Chicago",
      hours: "mon-fri 07:00-21:00; sat 09:00-17:00",
    });
    // El Paso is on Mountain time though Texas is Central.
    const elPaso = checkSite({ ...FIELDS, city: "El Paso", zip: "79901" });
    expect(elPaso.ok && elPaso.timeZone).toBe("America/Denver");
    expect(checkSite({ ...FIELDS, state: "tx" }).ok).toBe(true);
  });

  it("refuses a ZIP of another state, naming zip", () => {
    const checked = checkSite({ ...FIELDS, state: "CA" });
    expect(checked).toEqual({
      ok: false,
      errors: [{ field: "zip", code: "zip_not_in_state", message: "ZIP 78701 is in TX, not CA" }],
    });
  });

  it("refuses an unknown ZIP, an unknown state and unreadable hours, each by its field", () => {
    const checked = checkSite({ ...FIELDS, state: "XX", zip: "00000", hours: "weekdays 9-5" });
    expect(checked.ok).toBe(false);
    const fields = checked.ok ? [] : checked.errors.map((e) => e.field);
    expect(fields).toEqual(["state", "zip", "hours"]);
  });

  it("takes blank hours as any time", () => {
    expect(openingHoursOf({ hours: "" })).toBeNull();
    expect(openingHoursOf({ hours: "mon 08:00-09:00" })).toEqual(Int32Array.from([1440 + 480, 1440 + 540]));
    expect(sitePoint({ zip: "78701" })).not.toBeNull();
  });
});

describe("assets", () => {
  it("has a short list of types for every trade, and other", () => {
    for (const trade of TRADE_CODES) {
      expect(ASSET_TYPES[trade].length).toBeGreaterThan(0);
      expect(isAssetType(trade, "other")).toBe(true);
    }
    expect(isAssetType("hvac", "rtu")).toBe(true);
    expect(isAssetType("plumbing", "rtu")).toBe(false);
    expect(ASSET_TYPE_LIST).toContain("backflow_preventer");
  });

  it("refuses a type of another trade and a warranty ending before the install", () => {
    expect(
      checkAsset({ trade: "plumbing", type: "rtu", installedOn: null, warrantyEndsOn: null })[0]?.field,
    ).toBe("type");
    expect(
      checkAsset({ trade: "hvac", type: "rtu", installedOn: "2024-05-01", warrantyEndsOn: "2024-04-30" }),
    ).toEqual([{ field: "warranty_ends_on", message: "must not be before installed_on" }]);
    expect(
      checkAsset({ trade: "hvac", type: "rtu", installedOn: "2024-05-01", warrantyEndsOn: "2024-05-01" }),
    ).toEqual([]);
  });

  it("holds a warranty in force through its last day, never without an end", () => {
    expect(warrantyInForce({ warrantyEndsOn: "2027-04-17" }, "2027-04-17")).toBe(true);
    expect(warrantyInForce({ warrantyEndsOn: "2027-04-17" }, "2027-04-18")).toBe(false);
    expect(warrantyInForce({ warrantyEndsOn: null }, "2020-01-01")).toBe(false);
  });

  it("compares serials without case, spaces or dashes", () => {
    expect(serialKey("ab-12 34")).toBe(serialKey("AB1234"));
    expect(serialKey("AB1234")).not.toBe(serialKey("AB1235"));
  });
});
