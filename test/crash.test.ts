// Durability: a server process takes concurrent orders and is killed with SIGKILL mid-load; after a
// restart on the same data directory every order that got a 200 is readable.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { startChildServer } from "./helpers/child-server.js";
import { startReceiver } from "./helpers/webhook-receiver.js";

const dir = mkdtempSync(join(tmpdir(), "fd-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { DATA_DIR: dir, KEY_RATE_LIMIT_PER_MINUTE: "1000000", KEY_RATE_LIMIT_BURST: "1000000" };

describe("crash safety", () => {
  it("loses no acknowledged order when killed with SIGKILL under load", async () => {
    const first = await startChildServer(env);
    onTestFinished(() => first.kill("SIGKILL"));
    const key = (await first.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";

    const acknowledged: string[] = [];
    // Resolves when the 300th order is acknowledged: the moment to kill the server, requests in flight.
    const WANTED = 300;
    let enough: () => void = () => {};
    const enoughAcknowledged = new Promise<void>((resolve) => {
      enough = resolve;
    });
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop && i < 2000; i++) {
        try {
          const res = await fetch(`${first.baseUrl}/api/dispatch/v1/order`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key },
            body: JSON.stringify({
              trade: "plumbing",
              location: { state: "TX", zip: "78701" },
              description: `crash test ${w}-${i}`,
            }),
          });
          if (res.status === 200) {
            acknowledged.push(((await res.json()) as { order_id: string }).order_id);
            if (acknowledged.length >= WANTED) enough();
          } else await res.arrayBuffer();
        } catch {
          return; // the server died under us: this request was never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    // Kill once a good number of orders is acknowledged, while requests are still in flight (the test's
    // own timeout bounds the wait; the workers' 16 x 2000 orders are far more than enough).
    await Promise.race([enoughAcknowledged, Promise.all(workers)]);
    await first.kill("SIGKILL");
    stop = true;
    await Promise.all(workers);
    expect(acknowledged.length).toBeGreaterThanOrEqual(WANTED);

    const second = await startChildServer(env);
    try {
      const missing: string[] = [];
      for (const id of acknowledged) {
        const res = await fetch(`${second.baseUrl}/api/dispatch/v1/orders/${id}`, {
          headers: { "x-api-key": key },
        });
        if (res.status !== 200) missing.push(`${id}: ${res.status}`);
        await res.arrayBuffer();
      }
      expect(missing).toEqual([]);
    } finally {
      await second.kill();
    }
    // Everything the second process printed, read to the end: a later start prints no secret.
    await second.closed;
    expect(second.output()).toMatch(/Server listening/);
    expect(second.output()).not.toMatch(/fsd_test_[0-9A-Za-z]{36}/);
  }, 120_000);

  it("delivers the webhook of a change committed by a process killed before it could deliver", async () => {
    const receiver = await startReceiver();
    onTestFinished(() => receiver.close());
    const hookDir = mkdtempSync(join(tmpdir(), "fd-crash-hook-"));
    onTestFinished(() => rmSync(hookDir, { recursive: true, force: true }));
    const common = {
      DATA_DIR: hookDir,
      PROBE_ALLOW_PRIVATE_NETWORKS: "true",
      PROBE_ALLOWED_PORTS: String(receiver.port),
      SANDBOX_SIMULATION: "false",
    };
    // The first process never delivers: its dispatcher would first look an hour after start.
    const first = await startChildServer({ ...common, WEBHOOK_INTERVAL_MS: "3600000" });
    onTestFinished(() => first.kill("SIGKILL"));
    const key = (await first.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";
    const call = (path: string, body: unknown) =>
      fetch(`${first.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify(body),
      });
    const secret = ((await (await call("/api/dispatch/v1/webhooks/secret", {})).json()) as { secret: string })
      .secret;
    const res = await call("/api/dispatch/v1/order", {
      trade: "plumbing",
      location: { state: "TX", zip: "78701" },
      description: "crash test webhook",
      callback_url: receiver.url(),
    });
    expect(res.status).toBe(200);
    const { order_id } = (await res.json()) as { order_id: string };
    await first.kill("SIGKILL");
    expect(receiver.received).toHaveLength(0);

    const second = await startChildServer({ ...common, WEBHOOK_INTERVAL_MS: "100" });
    try {
      const [hook] = await receiver.waitFor(1, 20_000);
      const event = new Webhook(secret).verify(hook?.body ?? "", {
        "webhook-id": String(hook?.headers["webhook-id"]),
        "webhook-timestamp": String(hook?.headers["webhook-timestamp"]),
        "webhook-signature": String(hook?.headers["webhook-signature"]),
      }) as { type: string; data: { order: { order_id: string } } };
      expect(event.type).toBe("order.offered");
      expect(event.data.order.order_id).toBe(order_id);
    } finally {
      await second.kill();
    }
  }, 90_000);
});
