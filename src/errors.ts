// The closed set of error codes, their HTTP status and title: one table every transport maps from.

export const ERROR_CODES = {
  invalid_json: { status: 400, title: "Malformed JSON body" },
  invalid_request: { status: 400, title: "Invalid request" },
  invalid_url: { status: 400, title: "Invalid URL" },
  missing_api_key: { status: 401, title: "API key required" },
  invalid_api_key: { status: 401, title: "Invalid API key" },
  api_key_revoked: { status: 401, title: "API key revoked" },
  invalid_session: { status: 401, title: "Console session not valid or expired" },
  forbidden_origin: { status: 403, title: "Origin not allowed" },
  csrf_token_mismatch: { status: 403, title: "CSRF token missing or wrong" },
  key_kind_not_allowed: { status: 403, title: "Not allowed for this kind of key" },
  key_role_not_allowed: { status: 403, title: "Not allowed for this key's role" },
  approval_limit_exceeded: { status: 403, title: "Above this key's approval limit" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  not_acceptable: { status: 406, title: "Not acceptable" },
  request_timeout: { status: 408, title: "Request not received in time" },
  invalid_transition: { status: 409, title: "Not possible in the order's current status" },
  contractor_unavailable: { status: 409, title: "Contractor unavailable" },
  contractor_not_compliant: { status: 409, title: "Contractor insurance or license not valid" },
  contractor_excluded: { status: 409, title: "Contractor on the account's do-not-dispatch list" },
  nte_exceeded: { status: 409, title: "Over the NTE in force" },
  invoice_changed: { status: 409, title: "The invoice was revised since it was read" },
  offer_expired: { status: 409, title: "The offer's (or counter-offer's) deadline has passed" },
  window_unavailable: { status: 409, title: "Service window no longer available" },
  endpoint_disabled: { status: 409, title: "Webhook endpoint disabled" },
  proposal_stale: { status: 409, title: "Proposal out of date" },
  proposal_applied: { status: 409, title: "Proposal already applied" },
  optimizer_busy: { status: 409, title: "An optimisation of this mode's day is already running" },
  idempotency_request_in_progress: { status: 409, title: "Request with this Idempotency-Key is in progress" },
  attachment_quota_exceeded: { status: 409, title: "The order's attachments are at their limit" },
  completion_requirements_unmet: { status: 409, title: "Proof required for completion is missing" },
  rating_closed: { status: 409, title: "The rating can no longer be changed" },
  request_decided: { status: 409, title: "The request was already decided" },
  upload_offset_mismatch: { status: 409, title: "Upload-Offset is not where the upload is" },
  payload_too_large: { status: 413, title: "Request body too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  range_not_satisfiable: { status: 416, title: "Range not satisfiable" },
  validation_failed: { status: 422, title: "Validation failed" },
  unreadable_file: { status: 422, title: "The file cannot be read (truncated or damaged)" },
  idempotency_key_reused: { status: 422, title: "Idempotency-Key reused with a different request" },
  rate_limited: { status: 429, title: "Rate limit exceeded" },
  headers_too_large: { status: 431, title: "Request header fields too large" },
  internal_error: { status: 500, title: "Internal error" },
  dispatch_not_configured: { status: 503, title: "Dispatch API not configured" },
  service_unavailable: { status: 503, title: "Service temporarily unavailable" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export interface FieldError {
  field: string;
  message: string;
  /** A machine-readable reason, for rules that have one (an appointment window's, for instance). */
  code?: string;
}

/** An expected failure of an operation, rendered as an RFC 9457 problem by every transport. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: {
      errors?: FieldError[];
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    // An ApiError is an answer, not a fault: no stack trace, whose capture would cost more than the rest
    // of a 401 or 429 (the cheap answers a flood of bad requests should get).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.extra = options.extra;
    this.headers = options.headers;
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  instance?: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

function problemType(code: ErrorCode): string {
  return `/problems/${code}`;
}

export function toProblem(error: ApiError, requestId: string, instance?: string): Problem {
  const problem: Problem = {
    ...(error.extra ?? {}),
    type: problemType(error.code),
    title: ERROR_CODES[error.code].title,
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id: requestId,
  };
  if (instance !== undefined) problem.instance = instance;
  if (error.errors) problem.errors = error.errors;
  return problem;
}

/** 422 validation_failed naming every field at fault. */
export function validationError(errors: FieldError[]): ApiError {
  const fields = [...new Set(errors.map((e) => e.field || "body"))];
  return new ApiError("validation_failed", `Invalid request: ${fields.join(", ")}.`, { errors });
}
