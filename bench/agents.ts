// Agent-interface benchmark (issue: agent interfaces and discovery): the trade index through REST, as an
// MCP tools/call over Streamable HTTP, and as an A2A SendMessage over JSON-RPC, on one service process,
// each driven with autocannon (50 connections); MCP and A2A are reported as ratios to the REST call of
// the same operation, measured right before and right after each of them.
//
//   npm run bench:agents

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONNECTIONS, DIST, drive, type Load, row, SECONDS, start, stop, us, WARMUP_SECONDS } from "./lib.js";

const REST: Load = { name: "REST index", method: "GET", path: "/api/dispatch/index" };
const MCP: Load = {
  name: "MCP index",
  method: "POST",
  path: "/api/mcp",
  headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
  body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "dispatch.index", arguments: {} } },
};
const A2A: Load = {
  name: "A2A index",
  method: "POST",
  path: "/api/a2a",
  headers: { "a2a-version": "1.0" },
  body: {
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: {
      message: {
        messageId: "bench-message",
        role: "ROLE_USER",
        parts: [{ data: { skill: "dispatch.index", input: {} }, mediaType: "application/json" }],
      },
    },
  },
};

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-agents-"));
  const service = await start(
    join(DIST, "src/main.js"),
    {
      DATA_DIR: dataDir,
      PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
      PUBLIC_RATE_LIMIT_BURST: "100000000",
      AGENT_RATE_LIMIT_PER_MINUTE: "100000000",
      AGENT_RATE_LIMIT_BURST: "100000000",
    },
    "/readyz",
  );
  try {
    // Each answer is checked once before it is timed: a fast error would flatter the figures.
    for (const load of [MCP, A2A]) {
      const res = await fetch(service.url + load.path, {
        method: "POST",
        headers: { "content-type": "application/json", ...load.headers },
        body: JSON.stringify(load.body),
      });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('"trades"') || text.includes('"isError":true')) {
        throw new Error(`${load.name} did not answer the index: ${res.status} ${text.slice(0, 300)}`);
      }
    }
    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up; REST measured before and after each\n\n` +
        `${row(["interface", "req/s", "p50 ms", "p99 ms", "cpu us/req", "REST req/s", "REST cpu", "ratio"])}\n`,
    );
    await drive(service, REST, WARMUP_SECONDS);
    for (const load of [MCP, A2A]) {
      await drive(service, load, WARMUP_SECONDS);
      const before = await drive(service, REST, SECONDS);
      const f = await drive(service, load, SECONDS);
      const after = await drive(service, REST, SECONDS);
      const restRps = (before.rps + after.rps) / 2;
      const restCpu =
        before.cpuUsPerRequest !== null && after.cpuUsPerRequest !== null
          ? (before.cpuUsPerRequest + after.cpuUsPerRequest) / 2
          : null;
      const notes = f.non2xx || f.errors ? ` (non-2xx ${f.non2xx}, errors ${f.errors})` : "";
      process.stdout.write(
        `${row([load.name, f.rps.toFixed(0), f.p50, f.p99, us(f.cpuUsPerRequest), restRps.toFixed(0), us(restCpu), (f.rps / restRps).toFixed(2)])}${notes}\n`,
      );
    }
  } finally {
    await stop(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
