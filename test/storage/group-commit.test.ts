import { describe, expect, it, vi } from "vitest";
import { GroupCommitter } from "../../src/storage/group-commit.js";

/** A fake transaction runner that records how many transactions overlap. */
function recorder(delayMs: number) {
  let open = 0;
  const stats = { transactions: 0, maxOpen: 0 };
  const run = async <T>(work: (tx: null) => Promise<T>): Promise<T> => {
    open++;
    stats.transactions++;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    try {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return await work(null);
    } finally {
      open--;
    }
  };
  return { run, stats };
}

describe("group commit", () => {
  it("gathers writes submitted together into one transaction", async () => {
    const { run, stats } = recorder(5);
    const c = new GroupCommitter<null>(run);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => c.submit(async () => i)));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(stats.transactions).toBe(1);
  });

  it("commits one batch at a time with one lane, and several at once with more", async () => {
    for (const lanes of [1, 3]) {
      const { run, stats } = recorder(20);
      const c = new GroupCommitter<null>(run, 2, lanes);
      await Promise.all(Array.from({ length: 12 }, (_, i) => c.submit(async () => i)));
      await c.flushed();
      expect(stats.maxOpen).toBe(lanes);
    }
  });

  it("isolates a failing write: its neighbours commit, it alone is rejected", async () => {
    const { run, stats } = recorder(1);
    const c = new GroupCommitter<null>(run);
    const results = await Promise.allSettled(
      [1, 2, 3].map((i) =>
        c.submit(async () => {
          if (i === 2) throw new Error("bad write");
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // One batch that failed, then one transaction per write.
    expect(stats.transactions).toBe(4);
  });

  // Deferred writes wait on a timer: these tests move a fake clock instead of sleeping (batches still start
  // on the real setImmediate).
  it("commits a deferred write with the next batch, without a transaction of its own", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const { run, stats } = recorder(0);
      const c = new GroupCommitter<null>(run);
      let deferredDone = false;
      const deferred = c
        .defer(async () => "later", 60_000)
        .then((v) => {
          deferredDone = true;
          return v;
        });
      // All of its delay but the last millisecond: nothing commits it on its own before then.
      await vi.advanceTimersByTimeAsync(59_999);
      expect(stats.transactions).toBe(0);
      expect(deferredDone).toBe(false);
      expect(c.depth).toBe(0);
      expect(await c.submit(async () => "now")).toBe("now");
      expect(await deferred).toBe("later");
      expect(stats.transactions).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("commits a deferred write alone once its delay has passed, or at once when flushed", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const { run, stats } = recorder(0);
      const c = new GroupCommitter<null>(run);
      let committed = false;
      const first = c
        .defer(async () => 1, 30)
        .then((v) => {
          committed = true;
          return v;
        });
      await vi.advanceTimersByTimeAsync(29);
      expect(committed).toBe(false);
      expect(stats.transactions).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(await first).toBe(1);
      expect(stats.transactions).toBe(1);
      const flushed = c.defer(async () => 2, 60_000);
      await c.flushDeferred();
      expect(await flushed).toBe(2);
      expect(stats.transactions).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
