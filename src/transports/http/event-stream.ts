// Server-Sent Events for the operations that stream (operation.ts `stream`): the reply is taken over from
// Fastify (hijack, its headers copied first so Request-Id and the rate-limit fields stay), each event
// written as `id:`, `event:` and `data:` lines, a comment line every EVENTS_HEARTBEAT_MS, and everything
// stopped when the client goes or the server closes. A key holds EVENTS_MAX_STREAMS_PER_KEY streams at
// most in each process (429 beyond). A client too slow to take its events is cut off (it resumes with
// Last-Event-ID) rather than have this process buffer them without end.
//
// A stream is only as good as what opened it: its key (x-api-key) or console session (the cookie) is
// checked again every API_KEY_CACHE_TTL_MS, the time a revoked key's calls keep working at most, and a
// stream whose key was revoked or whose session ended gets a last `stream.closed` event whose data is the
// problem document saying why (its 401), then ends.

import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, toProblem } from "../../errors.js";
import { asApiError } from "../../operations/kernel/failures.js";
import type { AnyOperation, OperationContext, Services } from "../../operations/kernel/operation.js";
import { sessionCookieOf } from "./console-session.js";
import { firstHeader } from "./headers.js";

/** The stream's format, as the OpenAPI document describes its text/event-stream answer. */
export const EVENT_STREAM_FORMAT =
  "Server-Sent Events (text/event-stream; charset=utf-8). It opens with a comment line naming the request " +
  "and `retry: 2000`; then each event is three lines and a blank line: `id:` (the event's id, increasing: " +
  "send it back as Last-Event-ID to resume after it), `event:` (its type, as StreamEvent's `type`) and " +
  "`data:` (the event, a StreamEvent (#/components/schemas/StreamEvent) as one line of JSON). A comment line " +
  "(`:`) every EVENTS_HEARTBEAT_MS (15 s) keeps the connection open; the stream does not end on its own.";

export const EVENT_STREAM_EXAMPLE =
  "id: 1843\nevent: order.accepted\ndata: " +
  '{"id":"1843","type":"order.accepted","created_at":"2026-11-21T10:00:00.000Z","livemode":false,' +
  '"data":{"order":{"order_id":"ord_0VberZOdAb12Cd34Ef56","status":"accepted"},"previous_status":"offered"}}' +
  "\n\n";

/** Bytes a stream may have waiting to be sent before it is cut off. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** The event a stream ends with when what opened it is no longer valid. */
const STREAM_CLOSED_EVENT = "stream.closed";
/** How often a stream's key or session is checked when API_KEY_CACHE_TTL_MS is 0 (no cache). */
const UNCACHED_CHECK_MS = 1_000;

/**
 * Checks again what the stream's request authenticated with, as the gate did (an explicit key wins over
 * the console's cookie); throws its 401 when that is no longer valid. Null for a request with neither.
 */
function credentialCheck(services: Services, request: FastifyRequest): (() => Promise<void>) | null {
  const apiKey = firstHeader(request.headers["x-api-key"]);
  if (apiKey !== undefined) {
    return async () => {
      await services.keys.authenticate(apiKey);
    };
  }
  const cookie = sessionCookieOf(request);
  if (cookie === undefined) return null;
  return async () => {
    const session = await services.sessions.check(cookie);
    await services.keys.authenticateHash(session.keyHash);
  };
}

/**
 * Runs `check` every `intervalMs` (one at a time) and calls `expired` with the 401 once it fails that
 * way; another failure (the store down for a moment) is logged and the next check decides. Returns the
 * function that stops it.
 */
function watchCredential(
  check: () => Promise<void>,
  intervalMs: number,
  expired: (error: ApiError) => void,
  log: FastifyBaseLogger,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    check()
      .catch((error: unknown) => {
        const known = asApiError(error);
        if (known?.status === 401) expired(known);
        else log.warn({ err: error }, "could not check an event stream's key; checking again");
      })
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Whether the request asks for a stream: anything but a request that accepts JSON and not a stream. */
export function wantsStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? "";
  return accept.includes("text/event-stream") || !accept.includes("application/json");
}

export interface EventStreams {
  open(op: AnyOperation, ctx: OperationContext, input: unknown, reply: FastifyReply): Promise<void>;
}

export function eventStreams(app: FastifyInstance, services: Services): EventStreams {
  const perKey = new Map<string, number>();
  const open = new Set<() => void>();
  // Streams never end on their own: end them before the server waits for its connections to close.
  app.addHook("preClose", (done) => {
    for (const end of [...open]) end();
    done();
  });
  const { EVENTS_HEARTBEAT_MS: heartbeatMs, EVENTS_MAX_STREAMS_PER_KEY: maxStreams } = services.config;
  const checkMs =
    services.config.API_KEY_CACHE_TTL_MS > 0 ? services.config.API_KEY_CACHE_TTL_MS : UNCACHED_CHECK_MS;

  return {
    async open(op, ctx, input, reply) {
      const stream = op.stream;
      if (!stream) throw new Error(`${op.id} does not stream`);
      const keyId = ctx.principal?.keyId ?? "public";
      const held = perKey.get(keyId) ?? 0;
      if (held >= maxStreams) {
        throw new ApiError(
          "rate_limited",
          `This key holds ${held} event streams already, the most it may; close one first.`,
          { headers: { "Retry-After": "1" }, extra: { retry_after_seconds: 1 } },
        );
      }
      perKey.set(keyId, held + 1);
      const raw = reply.raw;
      // Events handed over before the headers go out (a resumed stream's backlog) wait here.
      let pending: string[] | null = [];
      let ended = false;
      const write = (text: string) => {
        if (ended) return;
        if (pending) pending.push(text);
        else if (raw.writableLength > MAX_BUFFERED_BYTES) end();
        else raw.write(text);
      };
      let stop: () => void = () => {};
      let unwatch: () => void = () => {};
      let heartbeat: ReturnType<typeof setInterval> | null = null;
      const end = () => {
        if (ended) return;
        ended = true;
        stop();
        unwatch();
        if (heartbeat) clearInterval(heartbeat);
        open.delete(end);
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
        if (!raw.writableEnded) raw.end();
      };
      try {
        stop = await stream(ctx, input, {
          send(id, event, data) {
            write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
          },
        });
      } catch (error) {
        ended = true;
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
        throw error;
      }
      open.add(end);
      reply.header("content-type", "text/event-stream; charset=utf-8");
      reply.header("cache-control", "no-store");
      reply.header("x-accel-buffering", "no"); // proxies that buffer (nginx) pass events at once
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) raw.setHeader(name, value);
      }
      reply.hijack();
      raw.on("close", end);
      // The connection's idle timeout must not cut a quiet stream: the heartbeat keeps it open.
      reply.request.raw.socket?.setTimeout(0);
      raw.writeHead(200);
      raw.write(`: events for ${ctx.requestId}\nretry: 2000\n\n`);
      const backlog = pending;
      pending = null;
      for (const text of backlog) write(text);
      heartbeat = setInterval(() => write(":\n\n"), heartbeatMs);
      heartbeat.unref();
      const check = credentialCheck(services, reply.request);
      if (check) {
        unwatch = watchCredential(
          check,
          checkMs,
          (error) => {
            const problem = toProblem(error, ctx.requestId, reply.request.url.split("?")[0]);
            write(`event: ${STREAM_CLOSED_EVENT}\ndata: ${JSON.stringify(problem)}\n\n`);
            end();
          },
          reply.log,
        );
      }
      if (raw.destroyed) end();
    },
  };
}
