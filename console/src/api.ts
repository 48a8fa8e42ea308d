// The console's one way to the service: the public API's operations (plus the session exchange), sent with
// the session cookie the browser holds (HttpOnly: script never sees it) and, on every state-changing
// request, the session's CSRF token. The API key itself is sent once, to sign in, and never kept.

import { signal } from "@preact/signals";
import type { Session } from "./types";

export const session = signal<Session | null | undefined>(undefined);

/** A field a 422 names (`lines.1.quantity`) and what is wrong with it. */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    /** The 422's fields; the problem's other members (`approval_limit_cents`, `version`, ...). */
    readonly errors: FieldProblem[] = [],
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

async function problemOf(res: Response): Promise<ApiProblem> {
  try {
    const body = (await res.json()) as Record<string, unknown> & {
      code?: string;
      detail?: string;
      errors?: FieldProblem[];
    };
    const detail = body.errors?.length ? body.errors.map((e) => e.message).join("; ") : body.detail;
    return new ApiProblem(
      res.status,
      body.code ?? "error",
      detail ?? res.statusText,
      body.errors ?? [],
      body,
    );
  } catch {
    return new ApiProblem(res.status, "error", res.statusText || "The service did not answer.");
  }
}

async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") {
    headers["x-csrf-token"] = session.value?.csrf_token ?? "";
    if (body !== undefined) headers["content-type"] = "application/json";
  }
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (!res.ok) {
    const problem = await problemOf(res);
    // The session ended (expired, signed out elsewhere, key revoked): back to the sign-in form.
    if (res.status === 401 && path !== "/console/session") session.value = null;
    throw problem;
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export function get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") params.set(k, String(v));
  const qs = params.toString();
  return send<T>("GET", qs ? `${path}?${qs}` : path);
}

export function post<T>(path: string, body: unknown): Promise<T> {
  return send<T>("POST", path, body);
}

/**
 * Who is signed in, if anyone (the cookie survives a reload; the key does not need to). Signed out only
 * when the service says the session is not valid: a service out of reach for a moment signs nobody out.
 */
export async function loadSession(): Promise<void> {
  try {
    session.value = await send<Session>("GET", "/console/session");
  } catch (err) {
    const refused = err instanceof ApiProblem && err.status === 401;
    if (refused || session.value === undefined) session.value = null;
  }
}

export async function signIn(apiKey: string): Promise<void> {
  session.value = await send<Session>("POST", "/console/session", { api_key: apiKey });
}

export async function signOut(): Promise<void> {
  try {
    await send<void>("DELETE", "/console/session");
  } finally {
    session.value = null;
  }
}

/** Every page of a cursor-paged list, up to `maxPages`. */
export async function allPages<T, K extends string>(
  path: string,
  field: K,
  query: Record<string, string | number | undefined>,
  maxPages = 10,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await get<Record<K, T[]> & { next_cursor: string | null }>(path, { ...query, cursor });
    out.push(...page[field]);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

/** One page of a cursor-paged list, as `eachPage` yields it: its items, and the list's `total` over every
 * page when the operation gives one (dispatcher.contractors does). */
interface Page<T> {
  items: T[];
  total: number | null;
}

/**
 * Every page of a cursor-paged list to the last one, as each arrives (a caller can draw what it has so
 * far), with no cap on their number: a caller that stops early knows it did, and can say how many of the
 * `total` it shows. Stops if the service hands back the cursor it was just given, rather than loop.
 */
export async function* eachPage<T, K extends string>(
  path: string,
  field: K,
  query: Record<string, string | number | undefined>,
): AsyncGenerator<Page<T>> {
  let cursor: string | undefined;
  for (;;) {
    const page = await get<Record<K, T[]> & { next_cursor: string | null; total?: number }>(path, {
      ...query,
      cursor,
    });
    yield { items: page[field], total: page.total ?? null };
    if (!page.next_cursor || page.next_cursor === cursor) return;
    cursor = page.next_cursor;
  }
}
