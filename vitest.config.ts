import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

// The whole suite runs on the embedded SQLite store with the in-memory limiter. With TEST_DATABASE_URL
// set (CI always sets it), a second project runs every harness-based suite (HTTP, security, fuzz) on
// PostgreSQL, and with TEST_REDIS_URL too, with the shared Redis limiter.
const postgres = process.env.TEST_DATABASE_URL
  ? [
      {
        extends: true as const,
        test: {
          name: "postgres",
          include: [
            "test/http/**/*.test.ts",
            "test/audit/**/*.test.ts",
            "test/fuzz.test.ts",
            // What the agent transports refuse, they refuse before either store sees it.
            "test/agents/input-refusals.test.ts",
          ],
          env: { TEST_STORE: "postgres", ...(process.env.TEST_REDIS_URL ? { TEST_LIMITER: "redis" } : {}) },
        },
      },
    ]
  : [];

export default defineConfig({
  test: {
    // Backstops for a test that hangs, not measures: CI machines have run the suite two and a half times
    // slower than a quiet machine here, and the slowest tests on PostgreSQL took 10-15 s quiet.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { sequencer: LongestFirst },
    globalSetup: ["test/global-setup.ts"],
    // Two cores: keep suites from starving the child-process tests.
    maxWorkers: 2,
    projects: [{ extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"] } }, ...postgres],
  },
});
