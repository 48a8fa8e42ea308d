// The pool file's verification dates: kept when valid, refused (with the line) when not a date.

import { describe, expect, it } from "vitest";
import { parseContractorFile } from "../../../src/operations/pool/contractor-file.js";

const HEAD =
  "external_ref,name,trades,states,hourly_rate_cents,insurance_verified_until,license_verified_until";

describe("contractor pool file: verification", () => {
  it("reads insurance and license verification dates, blank meaning not verified", () => {
    const parsed = parseContractorFile(
      [HEAD, "A-1,Alpha,plumbing,TX,10000,2027-03-31,2026-12-31", "A-2,Beta,plumbing,TX,10000,,"].join("\n"),
      "csv",
      "live",
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.contractors.map((c) => [c.insuranceVerifiedUntil, c.licenseVerifiedUntil])).toEqual([
      ["2027-03-31", "2026-12-31"],
      [null, null],
    ]);
  });

  it("refuses a verification that is not a date, naming the line and the field", () => {
    const parsed = parseContractorFile(
      [HEAD, "A-1,Alpha,plumbing,TX,10000,yes,2026-02-30"].join("\n"),
      "csv",
      "live",
    );
    expect(parsed.contractors).toEqual([]);
    expect(parsed.errors).toEqual([
      "line 2: insurance_verified_until: must be a date, YYYY-MM-DD",
      "line 2: license_verified_until: must be a date, YYYY-MM-DD",
    ]);
  });
});

describe("contractor pool file: working hours", () => {
  const HOURS_HEAD = "external_ref,name,trades,states,zip,hourly_rate_cents,hours";

  it("reads hours in the canonical form, blank meaning any time", () => {
    const parsed = parseContractorFile(
      [
        HOURS_HEAD,
        'A-1,Alpha,plumbing,TX,78701,10000,"Mon-Fri 08:00-17:00;sat 09:00-13:00"',
        "A-2,Beta,plumbing,TX,78701,10000,",
      ].join("\n"),
      "csv",
      "live",
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.contractors.map((c) => c.hours)).toEqual(["mon-fri 08:00-17:00; sat 09:00-13:00", null]);
  });

  it("refuses unreadable hours, naming the line, the column and the fault", () => {
    const parsed = parseContractorFile(
      [HOURS_HEAD, "A-1,Alpha,plumbing,TX,78701,10000,mon-fri 17:00-08:00"].join("\n"),
      "csv",
      "live",
    );
    expect(parsed.contractors).toEqual([]);
    expect(parsed.errors).toEqual([
      'line 2: hours: "17:00-08:00" ends before it starts (no overnight ranges)',
    ]);
  });
});
