// Maps any failure of an operation to the closed error set, the same for every transport: expected
// failures (ApiError) as they are, a store that cannot serve right now as 503 service_unavailable (the
// caller retries); anything else is a bug, for which this returns null. A client that hung up is neither:
// isClientAbort tells it apart from a store's lost connection, though both carry ECONNRESET.

import { ApiError } from "../../errors.js";
import { isStoreUnavailable } from "../../storage/store-errors.js";

/**
 * Whether `error` is Node's for a request whose client hung up before the request had fully arrived
 * (node:http destroys the request stream with "aborted", code ECONNRESET): nobody is left to answer, and
 * nothing is wrong with the service.
 */
export function isClientAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.message === "aborted" &&
    (error as { code?: unknown }).code === "ECONNRESET"
  );
}

export function asApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (isStoreUnavailable(error) && !isClientAbort(error)) {
    return new ApiError("service_unavailable", "The store is temporarily unavailable; retry shortly.", {
      headers: { "Retry-After": "1" },
    });
  }
  return null;
}
