// The metrics listener: Prometheus text at GET /metrics on a port of its own (METRICS_HOST:METRICS_PORT,
// loopback by default), apart from the API, so the public port never serves operational detail. A plain
// node:http server: one path, no API keys, no problem documents; a scraper reads the status and the text.

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyBaseLogger } from "fastify";

/** Where a scrape's text comes from: this process's registry, or the cluster's sum under `--workers`. */
export interface MetricsSource {
  contentType: string;
  scrape(): Promise<string>;
}

const TIMEOUT_MS = 10_000;

export function createMetricsServer(source: MetricsSource, logger: FastifyBaseLogger): Server {
  const server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0];
    if (path !== "/metrics") {
      response
        .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
        .end("metrics are at /metrics\n");
      return;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    source.scrape().then(
      (text) => {
        response.writeHead(200, { "content-type": source.contentType });
        response.end(request.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        logger.warn({ err }, "metrics collection failed");
        response
          .writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" })
          .end("metrics could not be collected from every worker; retry\n");
      },
    );
  });
  // Scrapes are short; a connection that sends nothing is not kept for long.
  server.requestTimeout = TIMEOUT_MS;
  server.headersTimeout = TIMEOUT_MS;
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Listens and returns the scrape URL (with the port chosen when `port` is 0). */
export async function listenMetrics(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "is in use" : `cannot be listened on (${error.message})`;
      reject(
        new Error(`metrics listener: ${host}:${port} ${why}; set METRICS_PORT to another port, or to off`),
      );
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(":") ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}/metrics`;
}

/** Stops accepting scrapes and ends idle keep-alive connections. */
export async function closeMetrics(server: Server): Promise<void> {
  const closed = once(server, "close");
  server.close();
  server.closeIdleConnections();
  await closed;
}
