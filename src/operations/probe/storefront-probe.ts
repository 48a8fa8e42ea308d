// POST /api/agentic-commerce/probe: the agentic-commerce readiness probe (public, limited per client IP
// with its own bucket, counted before the URL is looked at).

import { z } from "zod";
import { ApiError } from "../../errors.js";
import { MAX_URL_LENGTH, UrlRefused } from "../../net/address-policy.js";
import { CHECK_AREAS, CHECK_WEIGHTS } from "../../probe/scoring.js";
import { defineOperation } from "../kernel/operation.js";

const checkIds = Object.keys(CHECK_WEIGHTS) as [
  keyof typeof CHECK_WEIGHTS,
  ...(keyof typeof CHECK_WEIGHTS)[],
];
const areas = [...new Set(Object.values(CHECK_AREAS))] as [string, ...string[]];

const weightsText = Object.entries(CHECK_WEIGHTS)
  .map(([id, w]) => `${id} ${w}`)
  .join(", ");

const probeReportSchema = z
  .object({
    url: z.url().describe("The URL probed (a bare domain becomes https://<domain>/)."),
    origin: z.string().describe("The origin the checks ran against, after the home page's redirects."),
    grade: z.enum(["A", "B", "C", "D", "F"]).describe("A >= 90, B >= 80, C >= 70, D >= 60, F below."),
    score: z.number().int().min(0).max(100),
    max_score: z.literal(100),
    checks: z.array(
      z.object({
        id: z.enum(checkIds),
        area: z.enum(areas),
        status: z.enum(["pass", "warn", "fail"]),
        points: z.number().int().describe("pass earns max_points, warn half (rounded down), fail 0."),
        max_points: z.number().int(),
        found: z.object({
          url: z.string().nullable().describe("The URL fetched."),
          http_status: z.number().int().nullable().describe("Its HTTP status; null when no answer came."),
          detail: z.string().describe("What was found, and why the check passed or not."),
        }),
        fix: z.string().nullable().describe("How to earn the missing points; null on pass."),
        details: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
    snapshot: z.object({
      taken_at: z.iso.datetime(),
      duration_ms: z.number().int(),
      cached: z.boolean().describe("True when this is the snapshot of an earlier probe of the same origin."),
      fresh_until: z.iso.datetime().describe("Until when the same origin gets this snapshot again."),
      fetches: z.number().int().describe("HTTP requests the probe made, redirects included."),
    }),
    notice: z.string(),
  })
  .meta({ id: "ProbeReport" });

export const probeOperation = defineOperation({
  id: "agenticCommerceProbe",
  name: "agentic.readiness_probe",
  summary: "Probe a storefront's readiness for AI shopping agents",
  description:
    "Fetches a storefront the way an AI shopping agent would and grades what it finds: the Agentic " +
    "Commerce Protocol discovery document (/.well-known/acp.json), the Universal Commerce Protocol " +
    "profile (/.well-known/ucp), other agent entry points (A2A agent card, MCP server card, OAuth " +
    "protected-resource metadata, agents.json), schema.org Product JSON-LD on the home page and on a " +
    "product page from the sitemap, robots.txt rules for AI search and user-triggered agents, and the " +
    "answer-engine maps (sitemap, llms.txt, llms-full.txt). Each check says what was fetched, why it " +
    `passed or not and how to fix it. Score out of 100 (weights: ${weightsText}). The report is a ` +
    "snapshot, not an attested grade; the same origin probed again within 10 minutes returns the same " +
    "snapshot, marked cached. Only public hosts on ports 80 and 443 are fetched.",
  access: "public",
  effect: "read",
  openWorld: true,
  limit: "probe_ip",
  http: { method: "POST", path: "/api/agentic-commerce/probe", input: "body" },
  input: z.strictObject({
    url: z
      .string({
        error: (iss) =>
          `url ${iss.input === undefined ? "is required" : "must be a string"}: a storefront URL or domain`,
      })
      // The contract's bound, published; a longer url is refused by the address policy (400 invalid_url,
      // reason too_long), as the contract's probe refuses every bad URL, not by the schema (422).
      .meta({ maxLength: MAX_URL_LENGTH })
      .describe(
        "Storefront URL or bare domain (https://shop.example/ or shop.example); at most 255 characters.",
      ),
  }),
  output: probeReportSchema,
  example: { url: "https://shop.example.com/" },
  async handler(ctx, input) {
    try {
      return await ctx.services.probe.probe(input.url);
    } catch (error) {
      if (error instanceof UrlRefused) {
        throw new ApiError("invalid_url", error.message, {
          errors: [{ field: "url", message: error.message }],
          extra: { reason: error.reason },
        });
      }
      throw error;
    }
  },
});
