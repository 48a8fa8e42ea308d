// Sites and assets (issue 34) end to end: an account records its sites (the ZIP in the state, the zone
// derived, hours as contractors' working hours) and the equipment at them, imports sites from CSV (a bad
// file refused whole, every bad line listed), and names a site and assets on its orders and quotes: the
// location comes from the site, the order's view shows the site and its assets' warranties, the site's
// contact reaches the account and the contractor holding the job (a disclosure in the sealed records),
// and each asset's history lists its orders. Bad input is a 4xx naming its field.

import { beforeAll, describe, expect, it } from "vitest";
import { austinCrew, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const SITES = "/api/dispatch/v1/sites";
const ASSETS = "/api/dispatch/v1/assets";
const CONTACT = { name: "Dana Ortiz", phone: "+1 512 555 0142", email: "store42@example.com" };
const STORE = {
  name: "Store #42",
  address: "500 Congress Ave",
  city: "Austin",
  state: "tx",
  zip: "78701",
  hours: "MON-FRI 07:00-21:00;sat 09:00-17:00",
  access_notes: "Loading dock at the back",
  contact: CONTACT,
};
const RTU = {
  trade: "hvac",
  type: "rtu",
  make: "Carrier",
  model: "48FC-06",
  serial: "2419G-20417",
  installed_on: "2022-04-18",
  warranty_ends_on: "2099-04-17",
};
const JOB = { trade: "hvac", description: "Rooftop unit blowing warm air", urgency: "urgent" };

let h: Harness;
let acme: string;
let globex: string;
const as = (key: string) => ({ "x-api-key": key });

async function ok(res: Promise<{ statusCode: number; body: string; json(): unknown }>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
  return r.json() as any;
}

const fieldsOf = (body: { errors: Array<{ field: string }> }) => body.errors.map((e) => e.field);

beforeAll(async () => {
  h = await createHarness();
  const tag = Math.random().toString(36).slice(2, 8);
  // HVAC technicians at the sites' ZIP, working at any time: the jobs are matched whatever the hour.
  await h.services.store.contractors.insert(austinCrew(tag, 6), testRecord());
  await h.services.pool.load();
  acme = await h.key(`acme-${tag}`, "test");
  globex = await h.key(`globex-${tag}`, "test");
});

describe("sites", () => {
  it("creates a site with its zone derived and its hours written canonically, sealed with its contact as a disclosure", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    expect(site).toMatchObject({
      site_id: expect.stringMatching(/^site_/),
      state: "TX",
      time_zone: "America/Chicago",
      hours: "mon-fri 07:00-21:00; sat 09:00-17:00",
      contact: CONTACT,
      archived_at: null,
    });
    expect(site.point).not.toBeNull();
    const audit = await ok(h.get("/api/audit?kind=site.created&limit=200", as(acme)));
    const record = audit.records.find((r: { seal: string }) => r.seal === site.seal);
    expect(record).toBeDefined();
    // The contact is committed by digest: the sealed text holds none of it, the account's view reads it.
    const sealed = JSON.stringify(record.record);
    expect(sealed).not.toContain(CONTACT.email);
    expect(sealed).not.toContain(CONTACT.phone);
    expect(record.disclosed.site.contact).toEqual(CONTACT);
    expect(record.disclosed.site.name).toBe("Store #42");
  });

  it("refuses a ZIP of another state, an unknown ZIP and unreadable hours, naming each field", async () => {
    const wrongState = expectProblem(
      await h.post(SITES, { ...STORE, state: "CA" }, as(acme)),
      422,
      "validation_failed",
    );
    expect(wrongState.errors).toEqual([
      { field: "zip", code: "zip_not_in_state", message: "ZIP 78701 is in TX, not CA" },
    ]);
    const body = expectProblem(
      await h.post(SITES, { ...STORE, zip: "00000", hours: "weekdays 9 to 5" }, as(acme)),
      422,
      "validation_failed",
    );
    expect(fieldsOf(body).sort()).toEqual(["hours", "zip"]);
    const missing = expectProblem(await h.post(SITES, { name: "x" }, as(acme)), 422, "validation_failed");
    expect(fieldsOf(missing)).toEqual(expect.arrayContaining(["address", "city", "state", "zip"]));
  });

  it("changes only the fields given, refuses a change into another state's ZIP, and archives", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    const changed = await ok(
      h.post(`${SITES}/update`, { site_id: site.site_id, hours: "mon-sun 06:00-22:00" }, as(acme)),
    );
    expect(changed).toMatchObject({ hours: "mon-sun 06:00-22:00", name: "Store #42", contact: CONTACT });
    expect(changed.seal).not.toBe(site.seal);
    // El Paso's ZIP moves the site to Mountain time.
    const moved = await ok(
      h.post(`${SITES}/update`, { site_id: site.site_id, city: "El Paso", zip: "79901" }, as(acme)),
    );
    expect(moved.time_zone).toBe("America/Denver");
    const bad = expectProblem(
      await h.post(`${SITES}/update`, { site_id: site.site_id, zip: "10001" }, as(acme)),
      422,
      "validation_failed",
    );
    expect(fieldsOf(bad)).toEqual(["zip"]);
    expectProblem(
      await h.post(`${SITES}/update`, { site_id: site.site_id, hours: "" }, as(globex)),
      404,
      "not_found",
    );
    const archived = await ok(h.post(`${SITES}/archive`, { site_id: site.site_id }, as(acme)));
    expect(archived.archived_at).not.toBeNull();
    const again = await ok(h.post(`${SITES}/archive`, { site_id: site.site_id }, as(acme)));
    expect(again.archived_at).toBe(archived.archived_at);
    const refused = expectProblem(
      await h.post(`${SITES}/update`, { site_id: site.site_id, hours: "" }, as(acme)),
      422,
      "validation_failed",
    );
    expect(refused.errors[0]).toMatchObject({ field: "site_id", code: "site_archived" });
  });

  it("lists the account's sites only, by state and text, paged, archived ones when asked", async () => {
    const key = await h.key(`lister-${Math.random().toString(36).slice(2, 8)}`, "test");
    // biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
    const made: any[] = [];
    for (const [name, state, zip, city] of [
      ["Austin North", "TX", "78758", "Austin"],
      ["Dallas Uptown", "TX", "75201", "Dallas"],
      ["Portland Pearl", "OR", "97209", "Portland"],
    ] as const) {
      made.push(await ok(h.post(SITES, { ...STORE, name, state, zip, city }, as(key))));
    }
    await ok(h.post(`${SITES}/archive`, { site_id: made[1].site_id }, as(key)));
    const names = async (query: string) =>
      (await ok(h.get(`${SITES}${query}`, as(key)))).sites.map((s: { name: string }) => s.name).sort();
    expect(await names("")).toEqual(["Austin North", "Portland Pearl"]);
    expect(await names("?include_archived=true")).toEqual([
      "Austin North",
      "Dallas Uptown",
      "Portland Pearl",
    ]);
    expect(await names("?state=or")).toEqual(["Portland Pearl"]);
    expect(await names("?q=PEARL")).toEqual(["Portland Pearl"]);
    const first = await ok(h.get(`${SITES}?limit=1`, as(key)));
    expect(first.sites).toHaveLength(1);
    const second = await ok(h.get(`${SITES}?limit=1&cursor=${first.next_cursor}`, as(key)));
    expect(second.sites).toHaveLength(1);
    expect(second.sites[0].site_id).not.toBe(first.sites[0].site_id);
    expect(second.next_cursor).toBeNull();
    // The dispatch team reads every account's sites, without their contacts.
    const team = await h.dispatcherKey("test");
    const all = await ok(h.get(`/api/dispatcher/v1/sites?q=pearl&include_archived=true`, as(team)));
    const pearl = all.sites.find((s: { site_id: string }) => s.site_id === made[2].site_id);
    expect(pearl).toMatchObject({ name: "Portland Pearl", contact: null });
    const one = await ok(h.get(`/api/dispatcher/v1/sites/${made[0].site_id}`, as(team)));
    expect(one).toMatchObject({ site_id: made[0].site_id, contact: null, assets: [] });
    expectProblem(
      await h.get(`/api/dispatcher/v1/sites/${made[0].site_id}`, as(key)),
      403,
      "key_kind_not_allowed",
    );
    expectProblem(
      await h.get(`/api/dispatcher/v1/sites/${made[0].site_id}`, as(await h.dispatcherKey("live"))),
      404,
      "not_found",
    );
    const theirs = await ok(h.get(SITES, as(globex)));
    expect(theirs.sites.map((s: { site_id: string }) => s.site_id)).not.toContain(made[0].site_id);
    expectProblem(await h.get(`${SITES}/${made[0].site_id}`, as(globex)), 404, "not_found");
  });

  it("imports a CSV file of sites, and refuses a file with bad lines whole, every bad line listed", async () => {
    const key = await h.key(`importer-${Math.random().toString(36).slice(2, 8)}`, "test");
    const header = "name,address,city,state,zip,hours,access_notes,contact_name,contact_phone,contact_email";
    const good = [
      header,
      'Store #1,1 Main St,Austin,TX,78701,"mon-fri 08:00-17:00",,Ann,+1 512 555 0100,ann@example.com',
      "Store #2,2 Main St,Portland,OR,97209,,,,,",
    ].join("\n");
    const imported = await ok(h.post(`${SITES}/import`, { csv: good }, as(key)));
    expect(imported.imported).toBe(2);
    expect(imported.sites.map((s: { time_zone: string }) => s.time_zone)).toEqual([
      "America/Chicago",
      "America/Los_Angeles",
    ]);
    const bad = [
      header,
      "Store #3,3 Main St,Austin,TX,78701,,,,,",
      "Store #4,4 Main St,Austin,CA,78701,,,,,",
      "Store #5,,Austin,TX,78701,always,,,,bad-email",
    ].join("\n");
    const refused = expectProblem(
      await h.post(`${SITES}/import`, { csv: bad }, as(key)),
      422,
      "validation_failed",
    );
    expect(refused.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ line: 3, field: "zip" }),
        expect.objectContaining({ line: 4, field: "address" }),
        expect.objectContaining({ line: 4, field: "contact_email" }),
      ]),
    );
    expect(refused.lines.every((l: { line: number }) => l.line !== 2)).toBe(true);
    // Nothing of the refused file was written.
    const listed = await ok(h.get(`${SITES}?limit=200`, as(key)));
    expect(listed.sites).toHaveLength(2);
    const unknown = expectProblem(
      await h.post(
        `${SITES}/import`,
        { csv: "name,address,city,state,zip,colour\nx,y,z,TX,78701,red" },
        as(key),
      ),
      422,
      "validation_failed",
    );
    expect(unknown.lines).toEqual([expect.objectContaining({ line: 1, field: "colour" })]);
  });
});

describe("assets", () => {
  it("records an asset with its warranty, refuses a duplicate serial at the site and a type of another trade", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    const asset = await ok(h.post(ASSETS, { ...RTU, site_id: site.site_id }, as(acme)));
    expect(asset).toMatchObject({ site_id: site.site_id, type: "rtu", warranty_in_force: true });
    // The same serial, written another way, at the same site.
    const dup = expectProblem(
      await h.post(ASSETS, { ...RTU, site_id: site.site_id, serial: "2419g20417" }, as(acme)),
      422,
      "validation_failed",
    );
    expect(dup.errors[0]).toMatchObject({ field: "serial", code: "duplicate_serial" });
    const type = expectProblem(
      await h.post(ASSETS, { ...RTU, trade: "plumbing", site_id: site.site_id, serial: null }, as(acme)),
      422,
      "validation_failed",
    );
    expect(fieldsOf(type)).toEqual(["type"]);
    // Another account cannot put an asset at this site, nor learn the site exists.
    expectProblem(await h.post(ASSETS, { ...RTU, site_id: site.site_id }, as(globex)), 404, "not_found");
    const expired = await ok(
      h.post(`${ASSETS}/update`, { asset_id: asset.asset_id, warranty_ends_on: "2023-01-01" }, as(acme)),
    );
    expect(expired).toMatchObject({ warranty_in_force: false, serial: RTU.serial, make: "Carrier" });
    // Archived, its serial is free again at the site.
    await ok(h.post(`${ASSETS}/archive`, { asset_id: asset.asset_id }, as(acme)));
    await ok(h.post(ASSETS, { ...RTU, site_id: site.site_id }, as(acme)));
    const all = await ok(h.get(`${SITES}/${site.site_id}/assets`, as(acme)));
    expect(all.assets).toHaveLength(2);
    const one = await ok(h.get(`${SITES}/${site.site_id}`, as(acme)));
    expect(one.assets).toHaveLength(1);
  });
});

describe("orders and quotes naming a site", () => {
  it("takes the order's location from its site, shows the site and its assets, and lists the order in each asset's history", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    const rtu = await ok(h.post(ASSETS, { ...RTU, site_id: site.site_id }, as(acme)));
    const quote = await ok(h.post(QUOTE_PATH, { ...JOB, site_id: site.site_id }, as(acme)));
    expect(quote).toMatchObject({ state: "TX", time_zone: "America/Chicago" });
    const order = await ok(
      h.post(ORDER_PATH, { ...JOB, site_id: site.site_id, asset_ids: [rtu.asset_id] }, as(acme)),
    );
    expect(order.location).toEqual({
      state: "TX",
      zip: "78701",
      city: "Austin",
      address: "500 Congress Ave",
      name: "Store #42",
    });
    const expected = {
      site_id: site.site_id,
      name: "Store #42",
      time_zone: "America/Chicago",
      contact: CONTACT,
      assets: [expect.objectContaining({ asset_id: rtu.asset_id, type: "rtu", warranty_in_force: true })],
    };
    expect(order.site).toMatchObject(expected);
    const read = await ok(h.get(`/api/dispatch/v1/orders/${order.order_id}`, as(acme)));
    expect(read.site).toMatchObject(expected);
    const history = await ok(h.get(`${ASSETS}/${rtu.asset_id}/history`, as(acme)));
    expect(history.orders).toEqual([
      expect.objectContaining({
        order_id: order.order_id,
        status: order.status,
        trade: "hvac",
        completed_at: null,
        attachment_ids: [],
        report_url: null,
      }),
    ]);
    expectProblem(await h.get(`${ASSETS}/${rtu.asset_id}/history`, as(globex)), 404, "not_found");
  });

  it("shows the site's contact to the contractor holding the job, and to the dispatch team without it", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    const order = await ok(h.post(ORDER_PATH, { ...JOB, site_id: site.site_id }, as(acme)));
    const [row] = await h.services.store.orders.byIds([order.order_id]);
    const contractorId = row?.contractor_id;
    expect(contractorId, "the sandbox pool matched the job").toBeTruthy();
    const contractor = (
      await h.services.keys.issue({
        accountName: "crew",
        mode: "test",
        actor: "operator:test",
        kind: "contractor",
        contractorId: contractorId as string,
      })
    ).key;
    const offers = await ok(h.get("/api/contractor/v1/offers", as(contractor)));
    const offer = offers.offers.find((o: { order_id: string }) => o.order_id === order.order_id);
    // Offered, not yet its job: the offer names no contact.
    expect(JSON.stringify(offer)).not.toContain(CONTACT.email);
    await ok(h.post("/api/contractor/v1/offers/accept", { offer_id: offer.offer_id }, as(contractor)));
    const jobs = await ok(h.get("/api/contractor/v1/jobs", as(contractor)));
    const job = jobs.jobs.find((j: { order_id: string }) => j.order_id === order.order_id);
    expect(job.site).toMatchObject({ site_id: site.site_id, contact: CONTACT });
    const team = await ok(h.get("/api/dispatcher/v1/orders?limit=200", as(await h.dispatcherKey("test"))));
    const seen = team.orders.find((o: { order_id: string }) => o.order_id === order.order_id);
    expect(seen.site).toMatchObject({ site_id: site.site_id, contact: null });
  });

  it("refuses a location that disagrees with the site, another account's asset, an archived site, each by its field", async () => {
    const site = await ok(h.post(SITES, STORE, as(acme)));
    const disagree = expectProblem(
      await h.post(
        ORDER_PATH,
        { ...JOB, site_id: site.site_id, location: { state: "CA", zip: "94103" } },
        as(acme),
      ),
      422,
      "validation_failed",
    );
    expect(disagree.errors[0]).toMatchObject({ field: "location", code: "site_mismatch" });
    // A location that agrees is taken, its address over the site's.
    const agreeing = await ok(
      h.post(
        ORDER_PATH,
        { ...JOB, site_id: site.site_id, location: { state: "TX", zip: "78701", address: "Suite 200" } },
        as(acme),
      ),
    );
    expect(agreeing.location.address).toBe("Suite 200");
    // Globex's asset at Globex's site reads as one that does not exist.
    const theirSite = await ok(h.post(SITES, STORE, as(globex)));
    const theirAsset = await ok(h.post(ASSETS, { ...RTU, site_id: theirSite.site_id }, as(globex)));
    const foreign = expectProblem(
      await h.post(ORDER_PATH, { ...JOB, site_id: site.site_id, asset_ids: [theirAsset.asset_id] }, as(acme)),
      422,
      "validation_failed",
    );
    const missing = expectProblem(
      await h.post(
        ORDER_PATH,
        { ...JOB, site_id: site.site_id, asset_ids: ["ast_0VberZOdAb12Cd34Ef56"] },
        as(acme),
      ),
      422,
      "validation_failed",
    );
    expect(foreign.errors[0]).toMatchObject({ field: "asset_ids", code: "unknown_asset" });
    expect(missing.errors[0]).toMatchObject({ field: "asset_ids", code: "unknown_asset" });
    const theirs = expectProblem(
      await h.post(ORDER_PATH, { ...JOB, site_id: theirSite.site_id }, as(acme)),
      422,
      "validation_failed",
    );
    expect(theirs.errors[0]).toMatchObject({ field: "site_id", code: "unknown_site" });
    const noSite = expectProblem(
      await h.post(
        ORDER_PATH,
        { ...JOB, location: { state: "TX" }, asset_ids: [theirAsset.asset_id] },
        as(acme),
      ),
      422,
      "validation_failed",
    );
    expect(fieldsOf(noSite)).toEqual(["asset_ids"]);
    const neither = expectProblem(await h.post(ORDER_PATH, JOB, as(acme)), 422, "validation_failed");
    expect(fieldsOf(neither)).toEqual(["location"]);
    await ok(h.post(`${SITES}/archive`, { site_id: site.site_id }, as(acme)));
    const archived = expectProblem(
      await h.post(ORDER_PATH, { ...JOB, site_id: site.site_id }, as(acme)),
      422,
      "validation_failed",
    );
    expect(archived.errors[0]).toMatchObject({ field: "site_id", code: "site_archived" });
  });

  it("writes no site rows for an order without a site", async () => {
    const order = await ok(h.post(ORDER_PATH, { ...JOB, location: { state: "TX", zip: "78701" } }, as(acme)));
    expect(await h.services.store.sites.ofOrder(order.order_id)).toBeUndefined();
    const read = await ok(h.get(`/api/dispatch/v1/orders/${order.order_id}`, as(acme)));
    expect(read.site).toBeNull();
  });
});
