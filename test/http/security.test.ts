import { describe, expect, it } from "vitest";
import { createHarness, ORDER_PATH, QUOTE_PATH, validOrder, validQuote } from "../helpers/harness.js";
import { runSecuritySuite } from "../helpers/security-suite.js";

runSecuritySuite("dispatchQuote", (h, headers) => h.post(QUOTE_PATH, validQuote(), headers));
runSecuritySuite("dispatchOrder", (h, headers) => h.post(ORDER_PATH, validOrder(), headers));
runSecuritySuite("dispatchOrderStatus", (h, headers) =>
  h.get("/api/dispatch/v1/orders/ord_doesnotexist", headers),
);
runSecuritySuite("dispatchOrderList", (h, headers) => h.get("/api/dispatch/v1/orders?limit=5", headers));
runSecuritySuite("auditList", (h, headers) => h.get("/api/audit?limit=5", headers));

describe("key kinds", () => {
  it("refuses contractor and dispatcher keys on callers' operations with 403 key_kind_not_allowed", async () => {
    const h = await createHarness();
    const contractorId = (await h.services.store.contractors.load())[0]?.id as string;
    const issue = (kind: "contractor" | "dispatcher") =>
      h.services.keys.issue({
        accountName: `${kind}-keys`,
        mode: "test",
        actor: "operator:test",
        kind,
        contractorId: kind === "contractor" ? contractorId : null,
      });
    const caller = await h.key("caller", "test");
    for (const { key } of [await issue("contractor"), await issue("dispatcher")]) {
      for (const [method, url] of [
        ["POST", QUOTE_PATH],
        ["POST", ORDER_PATH],
        ["GET", "/api/dispatch/v1/orders/ord_0VberZOdAb12Cd34Ef56"],
        ["GET", "/api/audit"],
      ] as const) {
        const res =
          method === "POST"
            ? await h.post(url, validQuote({ description: "Leak" }), { "x-api-key": key })
            : await h.get(url, { "x-api-key": key });
        expect(res.statusCode, url).toBe(403);
        expect(res.json().code).toBe("key_kind_not_allowed");
      }
    }
    expect((await h.post(QUOTE_PATH, validQuote(), { "x-api-key": caller })).statusCode).toBe(200);
    await expect(
      h.services.keys.issue({ accountName: "x", mode: "test", actor: "operator:test", kind: "contractor" }),
    ).rejects.toThrow(/names its contractor/);
    await h.close();
  });
});
runSecuritySuite("webhooksConfig", (h, headers) => h.get("/api/dispatch/v1/webhooks", headers));
runSecuritySuite("webhooksRotateSecret", (h, headers) =>
  h.post("/api/dispatch/v1/webhooks/secret", { overlap_hours: 0 }, headers),
);
runSecuritySuite("webhooksDeliveries", (h, headers) =>
  h.get("/api/dispatch/v1/webhooks/deliveries?limit=5", headers),
);
