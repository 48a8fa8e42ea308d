// Small live pools for tests.

import type { AuditKind } from "../../src/audit/kinds.js";
import { type AuditEntry, sealRecord } from "../../src/audit/record.js";
import type { NewContractor } from "../../src/storage/store.js";

export function liveContractor(overrides: Partial<NewContractor> = {}): NewContractor {
  return {
    id: `ctr_live${Math.random().toString(36).slice(2, 10)}`,
    pool: "live",
    externalRef: null,
    name: "Secret Plumbing LLC",
    email: "owner@secret-plumbing.example",
    phone: "+1-555-0100",
    homeZip: "94103",
    trades: ["hvac", "plumbing"],
    states: ["CA"],
    lat: 37.77,
    lon: -122.41,
    serviceRadiusMiles: 40,
    hourlyRateCents: 12_000,
    emergencyCapable: true,
    maxActiveJobs: 50,
    rating: 4.6,
    responseMinutes: 45,
    active: true,
    excluded: false,
    // Verified far ahead, so a test's fake clock never makes it lapse unless the test says so.
    insuranceVerifiedUntil: "2099-12-31",
    licenseVerifiedUntil: "2099-12-31",
    ...overrides,
  };
}

/**
 * Sandbox plumbers and HVAC technicians in downtown Austin (78701), working at any time, for tests that
 * place the operations' example orders (plumbing, Austin) more than once: the generated sandbox pool has
 * one or two there, whose hours and held jobs vary with the hour the test runs at. Rated above the
 * generated ones, so they are offered the jobs first.
 */
export function austinCrew(tag: string, n = 3): NewContractor[] {
  return Array.from({ length: n }, (_, i) =>
    liveContractor({
      id: `ctr_austin${tag}${i}`,
      pool: "sandbox",
      name: `Austin Crew ${i}`,
      homeZip: "78701",
      trades: ["plumbing", "hvac"],
      states: ["TX"],
      lat: 30.27,
      lon: -97.74,
      rating: 5,
      responseMinutes: 20,
    }),
  );
}

/** A sealed audit record for store calls made directly by tests (they record an operator's action). */
export function testRecord(kind: AuditKind = "pool.imported"): AuditEntry {
  return sealRecord({
    kind,
    at: new Date().toISOString(),
    accountId: null,
    livemode: false,
    actor: "operator:test",
    data: { by: "test" },
  });
}
