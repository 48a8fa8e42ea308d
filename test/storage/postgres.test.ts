// The storage contract suite on PostgreSQL (TEST_DATABASE_URL). Without the variable the suite is
// skipped locally; CI always sets it and fails if PostgreSQL does not answer.

import { afterAll, describe } from "vitest";
import { openPostgresTestStore, type TestStore } from "../helpers/test-store.js";
import { runNotificationStoreContract } from "./notification-store-contract.js";
import { runRequestStoreContract } from "./request-store-contract.js";
import { runSiteStoreContract } from "./site-store-contract.js";
import { runStoreContract } from "./store-contract.js";
import { runTrackingLinkStoreContract } from "./tracking-link-store-contract.js";

const url = process.env.TEST_DATABASE_URL;
const opened: TestStore[] = [];
afterAll(async () => {
  for (const t of opened) await t.cleanup();
});

describe.skipIf(!url)("on TEST_DATABASE_URL", () => {
  runStoreContract("postgres", async (clock) => {
    const t = await openPostgresTestStore(4, clock);
    opened.push(t);
    return t.store;
  });
  runSiteStoreContract("postgres", async (clock) => {
    const t = await openPostgresTestStore(4, clock);
    opened.push(t);
    return t.store;
  });
  runTrackingLinkStoreContract("postgres", async (clock) => {
    const t = await openPostgresTestStore(4, clock);
    opened.push(t);
    return t.store;
  });
  runRequestStoreContract("postgres", async (clock) => {
    const t = await openPostgresTestStore(4, clock);
    opened.push(t);
    return t.store;
  });
  runNotificationStoreContract("postgres", async (clock) => {
    const t = await openPostgresTestStore(4, clock);
    opened.push(t);
    return t.store;
  });
});
