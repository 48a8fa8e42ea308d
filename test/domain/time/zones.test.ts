import { describe, expect, it } from "vitest";
import { lookupZip, zipsOfState } from "../../../src/domain/geo.js";
import { isTimeZone, offsetMinutes } from "../../../src/domain/time/local-time.js";
import {
  allTimeZones,
  STATE_TIME_ZONES,
  timeZoneOf,
  ZIP3_TIME_ZONES,
  ZIP5_TIME_ZONES,
} from "../../../src/domain/time/zones.js";
import { STATE_CODES } from "../../../src/domain/us-regions.js";

describe("timeZoneOf", () => {
  it("names a zone ICU knows for every state, DC and territory, and every ZIP entry", () => {
    for (const state of STATE_CODES) expect(STATE_TIME_ZONES[state], state).toBeDefined();
    for (const zone of allTimeZones()) expect(isTimeZone(zone), zone).toBe(true);
  });

  it("lists only ZIPs of their own state (the ZIP data the service has agrees, where it knows them)", () => {
    for (const [state, byPrefix] of Object.entries(ZIP3_TIME_ZONES)) {
      const prefixes = new Set(zipsOfState(state).map((z) => z.zip.slice(0, 3)));
      for (const prefix of Object.keys(byPrefix ?? {}))
        expect(prefixes.has(prefix), `${state} ${prefix}`).toBe(true);
    }
    for (const [state, byZip] of Object.entries(ZIP5_TIME_ZONES)) {
      for (const zip of Object.keys(byZip ?? {})) {
        const known = lookupZip(zip);
        if (known) expect(known.state, zip).toBe(state);
      }
    }
  });

  it("gives the state's zone without a ZIP, and for a ZIP in the state's main zone", () => {
    expect(timeZoneOf("CA")).toBe("America/Los_Angeles");
    expect(timeZoneOf("TX", "78701")).toBe("America/Chicago");
    expect(timeZoneOf("NY", "10001-1234")).toBe("America/New_York");
  });

  it("refines by ZIP in a state with two zones", () => {
    // El Paso, TX is Mountain time; Austin Central.
    expect(timeZoneOf("TX", "79901")).toBe("America/Denver");
    expect(timeZoneOf("TX")).toBe("America/Chicago");
    // Pensacola, FL is Central; Miami Eastern.
    expect(timeZoneOf("FL", "32501")).toBe("America/Chicago");
    expect(timeZoneOf("FL", "33101")).toBe("America/New_York");
    // Knoxville, TN is Eastern; Nashville Central; Tullahoma (in Knoxville's ZIP3 region 373) Central.
    expect(timeZoneOf("TN", "37902")).toBe("America/New_York");
    expect(timeZoneOf("TN", "37203")).toBe("America/Chicago");
    expect(timeZoneOf("TN", "37388")).toBe("America/Chicago");
    // Ontario, OR (Malheur County) is Mountain; Lewiston, ID Pacific.
    expect(timeZoneOf("OR", "97914")).toBe("America/Boise");
    expect(timeZoneOf("ID", "83501")).toBe("America/Los_Angeles");
    expect(timeZoneOf("ID", "83702")).toBe("America/Boise");
    // Iron Mountain in Michigan's Upper Peninsula is Central.
    expect(timeZoneOf("MI", "49801")).toBe("America/Menominee");
    expect(timeZoneOf("MI", "48201")).toBe("America/Detroit");
  });

  it("ignores a ZIP entry of another state", () => {
    // 799 is El Paso's prefix, but a job in California stays on Pacific time.
    expect(timeZoneOf("CA", "79901")).toBe("America/Los_Angeles");
  });

  it("knows the zones without daylight saving", () => {
    const summer = new Date("2026-07-01T12:00:00Z");
    const winter = new Date("2026-01-15T12:00:00Z");
    for (const [state, offset] of [
      ["AZ", -420],
      ["HI", -600],
      ["PR", -240],
    ] as const) {
      expect(offsetMinutes(summer, timeZoneOf(state)), state).toBe(offset);
      expect(offsetMinutes(winter, timeZoneOf(state)), state).toBe(offset);
    }
    expect(offsetMinutes(summer, timeZoneOf("AK"))).toBe(-480);
    expect(offsetMinutes(winter, timeZoneOf("AK"))).toBe(-540);
  });
});
