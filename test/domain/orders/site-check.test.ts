// The check-in's rule: accepted always, flagged when the phone's position is further from the site's point
// than the tolerance (three times it for a city's centroid) and the phone's own accuracy explain.

import { describe, expect, it } from "vitest";
import { distanceMiles } from "../../../src/domain/distance.js";
import { siteCheck } from "../../../src/domain/orders/site-check.js";

const AT = "2026-11-28T10:00:00.000Z";
const SITE = { lat: 37.7725, lon: -122.4147, source: "zip" as const };
/** About 5.5 miles east of the site (a degree of longitude here is about 54.7 miles). */
const EAST = { lat: 37.7725, lon: -122.3147 };

describe("siteCheck", () => {
  it("measures the distance and does not flag a position at the site", () => {
    const check = siteCheck(AT, { lat: 37.773, lon: -122.415, accuracy_m: 12 }, SITE, 3);
    expect(check).toMatchObject({
      at: AT,
      position: { lat: 37.773, lon: -122.415, accuracy_m: 12 },
      site_point: SITE,
      tolerance_miles: 3,
      flagged: false,
    });
    expect(check.distance_miles).toBeLessThan(0.1);
  });

  it("flags a position beyond the tolerance, with the distance rounded to hundredths", () => {
    const check = siteCheck(AT, EAST, SITE, 3);
    const miles = distanceMiles(EAST, SITE);
    expect(miles).toBeGreaterThan(5);
    expect(check.distance_miles).toBe(Math.round(miles * 100) / 100);
    expect(check.flagged).toBe(true);
    expect(check.position?.accuracy_m).toBeNull();
  });

  it("lets the phone's reported accuracy explain the distance", () => {
    // 5.5 miles away, accurate to 4 km (2.5 miles): within 3 + 2.5 miles.
    expect(siteCheck(AT, { ...EAST, accuracy_m: 4_000 }, SITE, 3).flagged).toBe(false);
    expect(siteCheck(AT, { ...EAST, accuracy_m: 3_000 }, SITE, 3).flagged).toBe(true);
  });

  it("allows three times the tolerance from a city's centroid", () => {
    const city = { ...SITE, source: "city" as const };
    const check = siteCheck(AT, EAST, city, 3);
    expect(check.tolerance_miles).toBe(9);
    expect(check.flagged).toBe(false);
  });

  it("records a step without a position, or without a site on the map, unflagged", () => {
    expect(siteCheck(AT, null, SITE, 3)).toEqual({
      at: AT,
      position: null,
      site_point: SITE,
      distance_miles: null,
      tolerance_miles: 3,
      flagged: false,
    });
    expect(siteCheck(AT, EAST, null, 3)).toMatchObject({
      position: { ...EAST, accuracy_m: null },
      site_point: null,
      distance_miles: null,
      tolerance_miles: null,
      flagged: false,
    });
  });
});
