// A webhook receiver on 127.0.0.1 for tests: records every request (headers and raw body) and answers
// from a script of responses (the last one repeats).

import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface WebhookReceiver {
  url(path?: string): string;
  port: number;
  received: ReceivedHook[];
  /** Answers to give, in order; the last one repeats. */
  script(...replies: Reply[]): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedHook[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  let replies: Reply[] = [{ status: 200 }];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        path: req.url ?? "/",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      });
      const reply = (replies.length > 1 ? replies.shift() : replies[0]) as Reply;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? "");
      for (const w of waiters.splice(0)) w();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    script(...r) {
      replies = r;
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} webhook requests, got ${received.length}`);
        await Promise.race([
          new Promise<void>((r) => waiters.push(r)),
          new Promise((r) => setTimeout(r, 100)),
        ]);
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
