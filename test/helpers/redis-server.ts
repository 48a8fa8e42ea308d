// A redis-server of the test's own on a free local port, to stop and start it under the service.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

export interface OwnRedis {
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const r: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      let out = "";
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
        proc?.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("Ready to accept connections")) {
            clearTimeout(timer);
            resolve();
          }
        });
        proc?.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
      });
      proc.stdout?.resume();
    },
    async kill() {
      const p = proc;
      if (!p || p.exitCode !== null) return;
      const exited = once(p, "exit");
      p.kill("SIGKILL");
      await exited;
      proc = null;
    },
  };
  return r;
}
