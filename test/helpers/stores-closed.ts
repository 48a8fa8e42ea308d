// Test stores a file opens itself (migration tests walk a store of their own up and down), closed and their
// files or schemas removed after all its tests.

import { afterAll } from "vitest";
import type { TestStore } from "./test-store.js";

/** A list to push each opened test store onto; closed and cleaned up after the file's tests. */
export function storesClosedAfterAll(): TestStore[] {
  const opened: TestStore[] = [];
  afterAll(async () => {
    for (const t of opened) {
      await t.store.close();
      await t.cleanup();
    }
  });
  return opened;
}
