// A check's result and the scoring table. The score is out of 100; each check's weight is below (and in
// docs/probe.md). pass earns the weight, warn half of it (rounded down), fail nothing.

export type CheckStatus = "pass" | "warn" | "fail";

export type CheckArea =
  | "agentic_commerce_protocol"
  | "universal_commerce_protocol"
  | "agent_surfaces"
  | "product_schema"
  | "robots"
  | "answer_engine_maps";

export const CHECK_WEIGHTS = {
  acp_discovery: 20,
  ucp_profile: 20,
  agent_surfaces: 10,
  product_schema_home: 10,
  product_schema_product_page: 15,
  robots_ai_agents: 10,
  robots_sitemap_line: 2,
  sitemap: 6,
  llms_txt: 5,
  llms_full_txt: 2,
} as const;

export type CheckId = keyof typeof CHECK_WEIGHTS;

export const CHECK_AREAS: Record<CheckId, CheckArea> = {
  acp_discovery: "agentic_commerce_protocol",
  ucp_profile: "universal_commerce_protocol",
  agent_surfaces: "agent_surfaces",
  product_schema_home: "product_schema",
  product_schema_product_page: "product_schema",
  robots_ai_agents: "robots",
  robots_sitemap_line: "robots",
  sitemap: "answer_engine_maps",
  llms_txt: "answer_engine_maps",
  llms_full_txt: "answer_engine_maps",
};

export interface CheckResult {
  id: CheckId;
  area: CheckArea;
  status: CheckStatus;
  points: number;
  max_points: number;
  found: {
    /** The URL fetched (or the first of several). */
    url: string | null;
    /** Its HTTP status, or null when no answer came. */
    http_status: number | null;
    /** What was found, and why the check passed or not. */
    detail: string;
  };
  /** How to earn the rest of the points; null when the check passed. */
  fix: string | null;
  /** Findings beyond the verdict (the robots table per agent, the product fields present, ...). */
  details?: Record<string, unknown>;
}

export function result(
  id: CheckId,
  status: CheckStatus,
  found: { url: string | null; http_status: number | null; detail: string },
  fix: string | null,
  details?: Record<string, unknown>,
): CheckResult {
  const max = CHECK_WEIGHTS[id];
  return {
    id,
    area: CHECK_AREAS[id],
    status,
    points: status === "pass" ? max : status === "warn" ? Math.floor(max / 2) : 0,
    max_points: max,
    found,
    fix: status === "pass" ? null : fix,
    ...(details ? { details } : {}),
  };
}

export function grade(score: number): "A" | "B" | "C" | "D" | "F" {
  if (score >= 90) return "A";
  if (score >= 80) return "B";
  if (score >= 70) return "C";
  if (score >= 60) return "D";
  return "F";
}
