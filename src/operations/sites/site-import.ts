// Importing sites from CSV (issue 34), in the contractor pool import's style (pool/contractor-file.ts):
// every line is checked and every problem reported together, by line number and field; nothing is
// imported from a file with a bad line. One record (sites.imported) seals the import: the sites' ids and
// the file's digest (each site's contact stays out of the sealed text).

import { createHash } from "node:crypto";
import { parse as parseCsv } from "csv-parse/sync";
import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { checkSite, SITE_LIMITS, type Site } from "../../domain/sites/site.js";
import { ApiError } from "../../errors.js";
import { defineOperation } from "../kernel/operation.js";
import { ownerOf, siteSchema, siteView } from "./site-views.js";
import { checkRoom, newSite, siteInput } from "./sites.js";

const COLUMNS = [
  "name",
  "address",
  "city",
  "state",
  "zip",
  "hours",
  "access_notes",
  "contact_name",
  "contact_phone",
  "contact_email",
] as const;
const REQUIRED = ["name", "address", "city", "state", "zip"] as const;

/** One problem of a file: its line (1 is the header) and field. */
interface LineProblem {
  line: number;
  field: string;
  message: string;
}

const blank = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);

/** The file's sites' inputs, or every problem of every line. */
function parseSiteFile(text: string): {
  inputs: z.output<typeof siteInput>[];
  problems: LineProblem[];
} {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as Record<
      string,
      string
    >[];
  } catch (error) {
    return {
      inputs: [],
      problems: [{ line: 0, field: "csv", message: `not CSV: ${(error as Error).message}` }],
    };
  }
  const problems: LineProblem[] = [];
  const header =
    rows.length > 0 ? Object.keys(rows[0] as object) : (text.split(/\r?\n/, 1)[0] ?? "").split(",");
  const unknown = header.filter((c) => !(COLUMNS as readonly string[]).includes(c.trim()));
  const missing = REQUIRED.filter((c) => !header.map((h) => h.trim()).includes(c));
  for (const c of unknown)
    problems.push({ line: 1, field: c, message: `unknown column (columns: ${COLUMNS.join(", ")})` });
  for (const c of missing) problems.push({ line: 1, field: c, message: "required column missing" });
  if (problems.length > 0) return { inputs: [], problems };
  if (rows.length === 0)
    return { inputs: [], problems: [{ line: 1, field: "csv", message: "no sites in the file" }] };
  if (rows.length > SITE_LIMITS.importLines) {
    return {
      inputs: [],
      problems: [{ line: 0, field: "csv", message: `at most ${SITE_LIMITS.importLines} sites per file` }],
    };
  }
  const inputs: z.output<typeof siteInput>[] = [];
  rows.forEach((row, i) => {
    const line = i + 2;
    const contact = {
      name: blank(row.contact_name),
      phone: blank(row.contact_phone),
      email: blank(row.contact_email),
    };
    const parsed = siteInput.safeParse({
      name: row.name,
      address: row.address,
      city: row.city,
      state: row.state,
      zip: row.zip,
      hours: row.hours ?? "",
      access_notes: blank(row.access_notes),
      contact,
    });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path.map(String);
        const field = path[0] === "contact" ? `contact_${path[1] ?? "name"}` : (path[0] ?? "line");
        problems.push({ line, field, message: issue.message });
      }
      return;
    }
    const checked = checkSite({
      ...parsed.data,
      accessNotes: parsed.data.access_notes,
      contact: { name: null, phone: null, email: null },
    });
    if (!checked.ok) {
      for (const e of checked.errors) problems.push({ line, field: e.field, message: e.message });
      return;
    }
    inputs.push(parsed.data);
  });
  return { inputs: problems.length > 0 ? [] : inputs, problems };
}

export const siteImportOperation = defineOperation({
  id: "dispatchSiteImport",
  name: "dispatch.site_import",
  summary: "Import sites from CSV",
  description:
    `Creates your sites from CSV text (a header line, then up to ${SITE_LIMITS.importLines} sites, at most ` +
    `${SITE_LIMITS.importBytes / 1024} KiB). Columns: ${COLUMNS.join(", ")} (the first five required; hours ` +
    "as in dispatch.site_create). Every line is checked first: a file with any bad line is refused whole " +
    "(422), with every problem listed in `lines` by line number (1 is the header) and field. Sealed " +
    "(sites.imported: the sites' ids and the file's SHA-256).",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/sites/import", input: "body" },
  input: z.strictObject({
    csv: z
      .string({ error: "csv must be the file's text" })
      .min(1, { error: "csv must not be empty" })
      .max(SITE_LIMITS.importBytes, { error: `csv is at most ${SITE_LIMITS.importBytes} characters` })
      .describe("The CSV file's text (UTF-8)."),
  }),
  output: z.object({ imported: z.number().int(), sites: z.array(siteSchema) }).meta({ id: "SiteImport" }),
  example: {
    csv:
      "name,address,city,state,zip,hours,access_notes,contact_name,contact_phone,contact_email\n" +
      'Store #42,500 Congress Ave,Austin,TX,78701,"mon-sat 07:00-21:00",Back door,Dana Ortiz,+1 512 555 0142,store42@example.com\n',
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { inputs, problems } = parseSiteFile(input.csv);
    if (problems.length > 0) {
      const lines = problems.slice(0, 500);
      throw new ApiError(
        "validation_failed",
        `The file is refused: ${problems.length} problem(s); nothing was imported.`,
        {
          errors: lines.map((p) => ({
            field: "csv",
            code: p.field,
            message: `line ${p.line}: ${p.field}: ${p.message}`,
          })),
          extra: { lines },
        },
      );
    }
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const digest = createHash("sha256").update(input.csv, "utf8").digest("hex");
    const sites = await store.write(async (tx) => {
      await checkRoom(store, owner, inputs.length, tx);
      const drafts = inputs.map((i) => newSite(owner, i, at, ""));
      const record = sealRecord({
        kind: "sites.imported",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { count: drafts.length, site_ids: drafts.map((s) => s.id), csv_sha256: digest },
      });
      const created: Site[] = drafts.map((s) => ({ ...s, seal: record.seal }));
      for (const s of created) await store.sites.insertSite(s, owner.actor, tx);
      tx.appendAudit(record);
      return created;
    });
    return { imported: sites.length, sites: sites.map((s) => siteView(s)) };
  },
});
