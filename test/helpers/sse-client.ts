// A minimal Server-Sent Events client for tests: opens GET /api/events on a listening server, parses the
// stream as it arrives, and lets a test wait for an event (or a comment) instead of sleeping.

import { request } from "node:http";

export interface SseEvent {
  id: string;
  event: string;
  data: {
    id: string;
    type: string;
    created_at: string;
    livemode: boolean;
    data: Record<string, unknown> & { order?: Record<string, unknown> };
  };
}

export interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body of a refused request (status other than 200). */
  body: string;
  events: SseEvent[];
  comments: string[];
  /** Resolves with the first event (received already or later) that `match` accepts. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once `n` comment lines arrived. */
  comment(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** `key`: the x-api-key to send; "" sends none (a console session's cookie in `headers` instead). */
export function openStream(
  baseUrl: string,
  key: string,
  headers: Record<string, string> = {},
  path = "/api/events",
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, {
      headers: { ...(key === "" ? {} : { "x-api-key": key }), accept: "text/event-stream", ...headers },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      const waiters = new Set<() => void>();
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: "",
        events: [],
        comments: [],
        ended: new Promise((ended) => res.once("end", () => ended())),
        next(match, timeoutMs = 10_000) {
          return until(() => stream.events.find(match), timeoutMs, "an event");
        },
        async comment(n, timeoutMs = 10_000) {
          await until(() => (stream.comments.length >= n ? true : undefined), timeoutMs, `${n} comments`);
        },
        close() {
          req.destroy();
        },
      };
      function until<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
        return new Promise((ok, fail) => {
          const check = () => {
            const found = find();
            if (found === undefined) return false;
            waiters.delete(check);
            clearTimeout(timer);
            ok(found);
            return true;
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            fail(
              new Error(
                `no ${what} within ${timeoutMs} ms; got ${JSON.stringify(stream.events.map((e) => [e.id, e.event]))}`,
              ),
            );
          }, timeoutMs);
          if (!check()) waiters.add(check);
        });
      }
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (stream.status !== 200) {
          stream.body += chunk;
          return;
        }
        buffer += chunk;
        for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) stream.comments.push(line);
            else {
              const colon = line.indexOf(":");
              fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
            }
          }
          if (fields.data !== undefined) {
            stream.events.push({
              id: fields.id ?? "",
              event: fields.event ?? "",
              data: JSON.parse(fields.data) as SseEvent["data"],
            });
          }
        }
        for (const check of [...waiters]) check();
      });
      if (stream.status !== 200) res.on("end", () => resolve(stream));
      else resolve(stream);
    });
    req.end();
  });
}
