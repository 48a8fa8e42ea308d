import { describe, expect, it } from "vitest";
import { approximatePoint, lookupCity, lookupZip } from "../../src/domain/geo.js";

describe("approximatePoint", () => {
  it("places a ZIP at its centroid, 4 decimals", () => {
    expect(approximatePoint("94103", "San Francisco", "CA")).toEqual({ lat: 37.7725, lon: -122.4147 });
    // ZIP+4 reads as its five-digit ZIP.
    expect(approximatePoint("10001-1234", null, "NY")).toEqual({ lat: 40.7484, lon: -73.9967 });
  });

  it("falls back to the city's centroid without a ZIP, or with one the data does not know", () => {
    const city = lookupCity("Austin", "TX");
    if (!city) throw new Error("the ZIP data knows Austin, TX");
    const expected = { lat: Math.round(city.lat * 1e4) / 1e4, lon: Math.round(city.lon * 1e4) / 1e4 };
    expect(approximatePoint(null, "Austin", "TX")).toEqual(expected);
    expect(approximatePoint("99999", "austin", "TX")).toEqual(expected);
  });

  it("places Alaska, Hawaii and Puerto Rico where they are", () => {
    const anchorage = approximatePoint(null, "Anchorage", "AK");
    expect(anchorage?.lat).toBeCloseTo(61.17, 1);
    expect(anchorage?.lon).toBeCloseTo(-149.85, 1);
    expect(approximatePoint("96813", null, "HI")).toEqual({ lat: 21.3179, lon: -157.8521 });
    expect(approximatePoint(null, "San Juan", "PR")).toEqual({ lat: 18.4011, lon: -66.06 });
  });

  it("answers null for a place it cannot find: no ZIP known and no city, or a city not in the state", () => {
    expect(approximatePoint(null, null, "CA")).toBeNull();
    expect(approximatePoint("99999", null, "CA")).toBeNull();
    expect(approximatePoint(null, "Springfield", "HI")).toBeNull();
    expect(approximatePoint(null, "San Francisco", "TX")).toBeNull();
  });

  it("answers the same point again without changing it (the memo hands out equal values)", () => {
    const first = approximatePoint(null, "Honolulu", "HI");
    const second = approximatePoint(null, "Honolulu", "HI");
    expect(second).toEqual(first);
    expect(lookupZip("96813")?.state).toBe("HI");
  });
});
