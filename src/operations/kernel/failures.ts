// Maps any failure of an operation to the closed error set, the same for every transport: expected
// failures (ApiError) as they are, a store that cannot serve right now as 503 service_unavailable (the
// caller retries); anything else is a bug, for which this returns null.

import { ApiError } from "../../errors.js";
import { isStoreUnavailable } from "../../storage/store-errors.js";

export function asApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (isStoreUnavailable(error)) {
    return new ApiError("service_unavailable", "The store is temporarily unavailable; retry shortly.", {
      headers: { "Retry-After": "1" },
    });
  }
  return null;
}
