// The web console's budgets (issue 17), measured in headless Chromium on this machine: the board's
// JavaScript gzipped (under 150 KB; the map's code and state shapes, loaded when the map is first shown,
// measured apart), the board with 2,000 open orders shown after sign-in (under 1 s), and
// a status change made through the API shown on the open board (end to end: request, commit, event stream,
// render). Builds the console with Vite into a temporary directory and serves it from an in-process server
// on a temporary SQLite store, with the dispatch team's key.
//
// Then the schedule board's (issue 31), on a store of its own: 200 active contractors in California (one
// lane each) holding 2,000 jobs on one day (10 each, an hour apart from 08:00), placed as scheduled orders
// through the API (each offered by the matcher to a lane with the hour free) and accepted by the lanes'
// contractors. The browser's zone is UTC+14, whose today is the seeded day, so the Schedule opens on it. Timed in the page (performance.now): the Schedule tab's
// click to its first page of lanes drawn with their blocks, then "Show all lanes" to the 200 lanes and
// 2,000 blocks drawn, over BENCH_CONSOLE_RUNS runs (budget: 1 s in all); the main thread's long tasks
// (PerformanceObserver 'longtask') meanwhile and while BENCH_CONSOLE_CHANGES jobs change status through
// the API (en route, from their contractors' keys), each timed from the request to its block's
// data-status on screen (request, commit, event stream, the lanes' debounced read, render); then drops
// (measureDrop): blocks dragged with the pointer to 20:00 on their lanes, timed from the release to the
// optimistic block (budget 50 ms), to the server's answer applied (budget 300 ms p95) and to the lanes read
// again.
//
//   npm run bench:console     (BENCH_CONSOLE_ORDERS=2000, BENCH_CONSOLE_CHANGES=20, BENCH_CONSOLE_RUNS=7,
//                              BENCH_CONSOLE_LANES=200, BENCH_CONSOLE_JOBS_PER_LANE=10 by default)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { build } from "vite";
import { sealRecord } from "../src/audit/record.js";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config.js";
import { zonedInstant } from "../src/domain/time/local-time.js";
import { createServices, openStore } from "../src/services/create-services.js";
import type { NewContractor } from "../src/storage/store.js";
import { buildApp } from "../src/transports/http/app.js";
import { DIST } from "./lib.js";

const ORDERS = Number(process.env.BENCH_CONSOLE_ORDERS ?? 2000);
const CHANGES = Number(process.env.BENCH_CONSOLE_CHANGES ?? 20);
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 7);
const LANES = Number(process.env.BENCH_CONSOLE_LANES ?? 200);
const JOBS_PER_LANE = Number(process.env.BENCH_CONSOLE_JOBS_PER_LANE ?? 10);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ROOT = join(DIST, "..");
const LA = "America/Los_Angeles";
/** The browser's zone for the schedule: its "Today" is the seeded day (the lanes are drawn in LA). */
const BROWSER_ZONE = "Pacific/Kiritimati";
/** BENCH_CONSOLE_PROFILE=1: one more run of the schedule's drawing under the CPU profiler, its top functions. */
const PROFILE = process.env.BENCH_CONSOLE_PROFILE === "1";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] ?? Number.NaN;
const ms = (n: number) => `${n.toFixed(0)} ms`;
const ratio = (n: number, budget: number) => `${(n / budget).toFixed(2)} of the budget`;

type Served = Awaited<ReturnType<typeof serve>>;

/** An in-process server on a fresh SQLite store under `dir`, serving the console built in `consoleDir`. */
async function serve(dir: string, consoleDir: string) {
  const config = loadConfig({
    ENV_FILE: "",
    DATA_DIR: dir,
    CONSOLE_DIR: consoleDir,
    LOG_LEVEL: "error",
    KEY_RATE_LIMIT_PER_MINUTE: "100000000",
    KEY_RATE_LIMIT_BURST: "100000000",
  });
  const store = openStore(config);
  const services = createServices(config, store);
  await bootstrap(store, services.keys);
  await services.pool.load();
  const app = await buildApp(services);
  const issue = async (kind: "account" | "dispatcher" | "contractor", contractorId?: string) =>
    (
      await services.keys.issue({
        accountName: kind === "account" ? "bench" : kind === "dispatcher" ? "ops" : `crew-${contractorId}`,
        mode: "live",
        kind,
        actor: "operator:bench",
        ...(contractorId ? { contractorId } : {}),
      })
    ).key;
  const call = async (method: "GET" | "POST", url: string, key: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url,
      headers: { "content-type": "application/json", "x-api-key": key },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (res.statusCode !== 200) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return res.json() as Record<string, unknown>;
  };
  return {
    app,
    services,
    issue,
    call,
    account: await issue("account"),
    dispatcher: await issue("dispatcher"),
    async listen() {
      await app.listen({ port: 0, host: "127.0.0.1" });
      return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    },
    async close() {
      await app.close();
      await services.audit.stop();
      await services.limiter.close();
      await services.fetcher.close();
      await store.close();
    },
  };
}

/** `n` orders at once, `batch` requests in flight, each made by `make(i)`; their answers in order. */
async function inBatches<T>(n: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += batch) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, j) => make(i + j)))));
  }
  return out;
}

async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
}

/** The board (issue 17): 2,000 open orders shown after sign-in, status changes shown. */
async function boardBench(browser: Browser, s: Served): Promise<string[]> {
  // The live pool is empty: every order waits in the dispatch team's tray.
  const ids = await inBatches(ORDERS, 50, async (i) => {
    const placed = await s.call("POST", "/api/dispatch/v1/order", s.account, {
      trade: "locksmith",
      location: { state: "CA", zip: "94103", city: "San Francisco" },
      description: `Bench job ${i}`,
    });
    return placed.order_id as string;
  });
  const base = await s.listen();
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  await page.goto(`${base}/console/`);
  await page.getByLabel("API key").fill(s.dispatcher);
  const t0 = performance.now();
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page
    .locator("[data-order-id]")
    .nth(ORDERS - 1)
    .waitFor({ timeout: 60_000 });
  const shown = performance.now() - t0;

  const changes: number[] = [];
  for (const id of ids.slice(0, CHANGES)) {
    const t = performance.now();
    await s.call("POST", "/api/dispatcher/v1/orders/cancel", s.dispatcher, { order_id: id, reason: "bench" });
    await page.locator(`[data-order-id="${id}"][data-status="cancelled"]`).waitFor();
    changes.push(performance.now() - t);
  }
  await page.close();
  return [
    `board with ${ORDERS} open orders shown ${shown.toFixed(0)} ms after Sign in (budget 1000 ms)`,
    `status change through the API to the open board (${CHANGES}): median ${median(changes).toFixed(1)} ms, p95 ${p95(changes).toFixed(1)} ms`,
  ];
}

/** The lane contractors: `LANES` locksmiths of San Francisco, any hours, room for their day's jobs. */
function laneContractors(): NewContractor[] {
  return Array.from({ length: LANES }, (_, i) => {
    const n = String(i).padStart(3, "0");
    return {
      id: `ctr_benchlane${n}`,
      pool: "live",
      externalRef: null,
      name: `Bench Lane ${n}`,
      email: null,
      phone: null,
      homeZip: "94103",
      trades: ["locksmith"],
      states: ["CA"],
      lat: 37.77,
      lon: -122.41,
      serviceRadiusMiles: 40,
      hourlyRateCents: 12_000,
      emergencyCapable: true,
      maxActiveJobs: JOBS_PER_LANE + 10,
      rating: 4.6,
      responseMinutes: 45,
      active: true,
      excluded: false,
      insuranceVerifiedUntil: "2099-12-31",
      licenseVerifiedUntil: "2099-12-31",
    };
  });
}

/** The page's long tasks since `since` (performance.now() in the page): how many, the longest, in all. */
async function longTasks(page: Page, since: number): Promise<{ count: number; max: number; total: number }> {
  const tasks = (await page.evaluate("window.__longTasks")) as Array<[number, number]>;
  const after = tasks.filter(([start]) => start >= since);
  return {
    count: after.length,
    max: Math.max(0, ...after.map(([, d]) => d)),
    total: after.reduce((n, [, d]) => n + d, 0),
  };
}

/** The page's clock now (performance.now()). */
const pageNow = async (page: Page) => (await page.evaluate("performance.now()")) as number;

/** The page's document, for functions run in the page (this program's types know no DOM). */
interface PageGlobal {
  document: { querySelectorAll(selector: string): { length: number } };
}

/** Waits for `lanes` lanes with `blocks` blocks on them; the page's clock at the frame that showed them. */
async function drawn(page: Page, lanes: number, blocks: number): Promise<number> {
  const at = await page.waitForFunction(
    ([l, b]) => {
      const { document } = globalThis as unknown as PageGlobal;
      return document.querySelectorAll("li.lane[data-contractor-id]").length >= l &&
        document.querySelectorAll("li.lane[data-contractor-id] .lane-track [data-order-id]").length >= b
        ? performance.now()
        : false;
    },
    [lanes, blocks] as const,
    { polling: "raf", timeout: 60_000 },
  );
  return (await at.jsonValue()) as number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

/** The console's minified source where a profiled function starts (its name there is mangled). */
function sourceAt(consoleDir: string, f: ProfileNode["callFrame"]): string {
  const file = f.url.match(/\/console\/(assets\/[^?#]+\.js)/)?.[1];
  if (!file) return "";
  const line = readFileSync(join(consoleDir, file), "utf8").split("\n")[f.lineNumber] ?? "";
  return ` \`${line.slice(f.columnNumber, f.columnNumber + 90)}\``;
}

/** One more run of the schedule drawn (tab, then "Show all lanes") under Chromium's CPU profiler: the
 * functions with the most self time, a line each. */
async function profileRender(
  page: Page,
  consoleDir: string,
  scheduleTab: ReturnType<Page["locator"]>,
  boardTab: ReturnType<Page["locator"]>,
): Promise<string[]> {
  await boardTab.click();
  await page.locator("li.lane").first().waitFor({ state: "detached" });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  await scheduleTab.click();
  await drawn(page, 25, 25 * JOBS_PER_LANE);
  await page.getByRole("button", { name: "Show all lanes" }).click();
  await drawn(page, LANES, LANES * JOBS_PER_LANE);
  const { profile } = (await cdp.send("Profiler.stop")) as unknown as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  };
  await cdp.detach();
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let all = 0;
  for (const [i, id] of profile.samples.entries()) {
    const node = byNode.get(id);
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const f = node?.callFrame;
    if (!f || f.functionName === "(idle)") continue;
    const name = `${f.functionName || "(anonymous)"} ${f.url ? `${f.url.replace(/^.*\//, "")}:${f.lineNumber + 1}:${f.columnNumber + 1}${sourceAt(consoleDir, f)}` : ""}`;
    self.set(name, (self.get(name) ?? 0) + dt);
    all += dt;
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 15);
  return [
    `profile of one more run (self time, ${ms(all)} busy in all; (program) is the browser's own work, style and layout among it):`,
    ...top.map(([name, t]) => `  ${ms(t).padStart(7)}  ${name}`),
  ];
}

/**
 * Drops on the open schedule (every lane shown): `DROPS` blocks, each dragged with the pointer along its
 * lane from its hour to 20:00 (a reschedule: a window of the same length from there, `start` 20:00). In the
 * page's clock, from the pointer's release: the optimistic block drawn (budget 50 ms), the server's answer
 * applied (the block drawn solid, budget 300 ms p95), and the lanes read again with the block at its new
 * start (no budget: what another dispatcher's screen waits for too).
 */
async function measureDrop(
  page: Page,
  blocks: ReadonlyArray<{ orderId: string; contractorId: string }>,
  at: string,
): Promise<string[]> {
  await page.evaluate(`window.__dropAt = 0;
    window.addEventListener("pointerup", () => { window.__dropAt = performance.now(); }, true);
    window.__seen = {};
    window.__watch = {};
    new MutationObserver(() => {
      for (const [k, sel] of Object.entries(window.__watch)) {
        if (!window.__seen[k] && document.querySelector(sel)) window.__seen[k] = performance.now();
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true });`);
  const optimistic: number[] = [];
  const answered: number[] = [];
  const reread: number[] = [];
  const refused: string[] = [];
  const target = Date.parse(at);
  for (const { orderId, contractorId } of blocks) {
    const lane = page.locator(`li.lane[data-contractor-id="${contractorId}"]`);
    const block = lane.locator(`.block[data-order-id="${orderId}"]`);
    await block.scrollIntoViewIfNeeded();
    const track = lane.locator(".lane-track");
    const box = await track.boundingBox();
    const from = await block.boundingBox();
    const day0 = Date.parse((await track.getAttribute("data-day-start")) ?? "");
    const day1 = Date.parse((await track.getAttribute("data-day-end")) ?? "");
    if (!box || !from) throw new Error(`block ${orderId} is not on screen`);
    await page.evaluate(
      `window.__seen = {}; window.__watch = {
        optimistic: '[data-pending-order-id="${orderId}"]',
        answered: '[data-pending-order-id="${orderId}"][data-settled="true"]',
        reread: '.block[data-order-id="${orderId}"][data-start="${new Date(target).toISOString()}"]',
        refused: '.lane-refused[data-order-id="${orderId}"]'
      };`,
    );
    await page.mouse.move(from.x + 2, from.y + from.height / 2);
    await page.mouse.down();
    const x = box.x + ((target - day0) / (day1 - day0)) * box.width + 2;
    await page.mouse.move(x, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    // A function, not a string: the console's CSP has no 'unsafe-eval'.
    await page.waitForFunction(
      () => {
        const seen = (globalThis as unknown as { __seen: Record<string, number> }).__seen;
        return Boolean(seen.reread || seen.refused);
      },
      null,
      { timeout: 30_000 },
    );
    const seen = (await page.evaluate("({ ...window.__seen, dropAt: window.__dropAt })")) as Record<
      string,
      number
    >;
    const dropAt = seen.dropAt ?? 0;
    if (seen.refused) {
      refused.push(
        (await page.locator(`.lane-refused[data-order-id="${orderId}"]`).textContent()) ?? orderId,
      );
      continue;
    }
    if (seen.optimistic) optimistic.push(seen.optimistic - dropAt);
    if (seen.answered) answered.push(seen.answered - dropAt);
    if (seen.reread) reread.push(seen.reread - dropAt);
  }
  return [
    `drops (${blocks.length} blocks dragged along their lanes to ${new Date(target).toISOString()}; ${refused.length} refused${refused.length ? `: ${refused[0]}` : ""}):`,
    `  optimistic block drawn: median ${ms(median(optimistic))}, p95 ${ms(p95(optimistic))} (${ratio(p95(optimistic), 50)}; budget 50 ms)`,
    `  the server's answer applied: median ${ms(median(answered))}, p95 ${ms(p95(answered))} (${ratio(p95(answered), 300)}; budget 300 ms p95)`,
    `  the lanes read again with the block moved: median ${ms(median(reread))}, p95 ${ms(p95(reread))}`,
  ];
}

/** The schedule board (issue 31): 200 lanes, 2,000 jobs on one day. */
async function scheduleBench(browser: Browser, s: Served, consoleDir: string): Promise<string[]> {
  const jobs = LANES * JOBS_PER_LANE;
  // The day: today at UTC+14 (the browser's zone below, so the Schedule opens on it), in Los Angeles
  // tomorrow or, before 02:00 there, today: its jobs from 08:00 on are ahead either way.
  const [y, m, d] = new Date()
    .toLocaleDateString("en-CA", { timeZone: BROWSER_ZONE })
    .split("-")
    .map(Number) as [number, number, number];
  const la = (hour: number) => zonedInstant(LA, { year: y, month: m, day: d, hour, minute: 0 });
  const t0 = performance.now();
  const crew = laneContractors();
  await s.services.store.contractors.insert(
    crew,
    sealRecord({
      kind: "pool.imported",
      at: new Date().toISOString(),
      accountId: null,
      livemode: true,
      actor: "operator:bench",
      data: { by: "bench" },
    }),
  );
  await s.services.pool.load();
  // An hour's orders at a time (LANES of them, an hour long, from 08:00 on): the matcher offers each to a
  // lane with the hour free, and each lane's contractor accepts its offers.
  const ids: string[] = [];
  for (let hour = 8; hour < 8 + JOBS_PER_LANE; hour++) {
    ids.push(
      ...(await inBatches(LANES, 25, async (i) => {
        const placed = await s.call("POST", "/api/dispatch/v1/order", s.account, {
          trade: "locksmith",
          urgency: "scheduled",
          location: { state: "CA", zip: "94103", city: "San Francisco", address: `${i} Market St` },
          description: `Bench schedule job ${hour}:${i}`,
          service_window: { start: la(hour).toISOString(), end: la(hour + 1).toISOString() },
        });
        return placed.order_id as string;
      })),
    );
  }
  const crewKeys = await Promise.all(crew.map((c) => s.issue("contractor", c.id)));
  await inBatches(LANES, 10, async (lane) => {
    const key = crewKeys[lane] as string;
    const { offers } = (await s.call("GET", "/api/contractor/v1/offers", key)) as {
      offers: Array<{ offer_id: string }>;
    };
    for (const o of offers)
      await s.call("POST", "/api/contractor/v1/offers/accept", key, { offer_id: o.offer_id });
  });
  const date = `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
  // Each lane's jobs, read as the Schedule reads them (pages of 50).
  const held = new Map<string, string[]>();
  let cursor: string | null = null;
  do {
    const lanesPage = (await s.call(
      "GET",
      `/api/dispatcher/v1/schedule/lanes?date=${date}&limit=50${cursor ? `&cursor=${cursor}` : ""}`,
      s.dispatcher,
    )) as unknown as {
      lanes: Array<{ contractor_id: string; jobs: Array<{ order_id: string; status: string }> }>;
      next_cursor: string | null;
    };
    for (const l of lanesPage.lanes) {
      held.set(
        l.contractor_id,
        l.jobs.filter((j) => j.status === "accepted").map((j) => j.order_id),
      );
    }
    cursor = lanesPage.next_cursor;
  } while (cursor);
  const perLane = [...held.values()].map((j) => j.length);
  if (held.size !== LANES || perLane.reduce((n, k) => n + k, 0) !== jobs) {
    throw new Error(
      `the seeded day has ${held.size} lanes, ${perLane.reduce((n, k) => n + k, 0)} accepted jobs`,
    );
  }
  const seeded = `${LANES} lanes, ${jobs} jobs accepted on ${date} (${Math.min(...perLane)}-${Math.max(...perLane)} a lane) seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`;

  const base = await s.listen();
  const context = await browser.newContext({
    viewport: { width: 1440, height: 900 },
    timezoneId: BROWSER_ZONE,
  });
  // The main thread's long tasks, [start, duration] in the page's clock, from the page's first script on.
  await context.addInitScript(`window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });`);
  const page = await context.newPage();
  try {
    await signIn(page, base, s.dispatcher);
    // The page's clock at the last click, read by the measurements below.
    await page.evaluate(
      `document.addEventListener("click", () => { window.__clickAt = performance.now(); }, true)`,
    );
    const clickAt = async () => (await page.evaluate("window.__clickAt")) as number;
    const views = page.getByRole("navigation", { name: "Dispatch team views" });
    const scheduleTab = views.getByRole("button", { name: "Schedule", exact: true });
    const boardTab = views.getByRole("button", { name: "Board", exact: true });
    const firstPage: number[] = [];
    const all: number[] = [];
    const total: number[] = [];
    let renderTasks = { count: 0, max: 0, total: 0 };
    for (let run = 0; run < RUNS; run++) {
      if (run > 0) {
        await boardTab.click();
        await page.locator("li.lane").first().waitFor({ state: "detached" });
      }
      const since = await pageNow(page);
      await scheduleTab.click();
      const first = (await drawn(page, 25, 25 * JOBS_PER_LANE)) - (await clickAt());
      await page.getByRole("button", { name: "Show all lanes" }).click();
      const rest = (await drawn(page, LANES, jobs)) - (await clickAt());
      firstPage.push(first);
      all.push(rest);
      total.push(first + rest);
      const tasks = await longTasks(page, since);
      if (tasks.max > renderTasks.max) renderTasks = tasks;
    }
    await page.screenshot({ path: join(ROOT, "test-artifacts", "bench-schedule.png") });
    const profile = PROFILE ? await profileRender(page, consoleDir, scheduleTab, boardTab) : [];

    // Live: jobs across the lanes set off (en route) through their contractors' keys, one at a time.
    const step = Math.max(1, Math.floor(LANES / CHANGES));
    const changed = Array.from({ length: Math.min(CHANGES, LANES) }, (_, k) => k * step);
    const since = await pageNow(page);
    const changes: number[] = [];
    for (const lane of changed) {
      const id = held.get(crew[lane]?.id as string)?.[0] as string;
      const t = performance.now();
      await s.call("POST", "/api/contractor/v1/jobs/status", crewKeys[lane] as string, {
        order_id: id,
        status: "en_route",
        eta_minutes: 30,
      });
      await page
        .locator(`li.lane .lane-track [data-order-id="${id}"][data-status="en_route"]`)
        .waitFor({ timeout: 30_000 });
      changes.push(performance.now() - t);
    }
    const liveTasks = await longTasks(page, since);
    const lanesAfter = await page.locator("li.lane[data-contractor-id]").count();
    // Drops: on the lanes beside those set off, their first job (still accepted) to 20:00.
    const dropped = changed
      .map((lane) => crew[(lane + 1) % LANES]?.id as string)
      .map((contractorId) => ({ contractorId, orderId: held.get(contractorId)?.[0] as string }));
    const drop = await measureDrop(page, dropped, la(20).toISOString());
    return [
      seeded,
      `schedule with ${LANES} lanes and ${jobs} jobs drawn (${RUNS} runs; Schedule tab to its first 25 lanes, then "Show all lanes" to all):`,
      `  first 25 lanes: median ${ms(median(firstPage))}, p95 ${ms(p95(firstPage))}`,
      `  "Show all lanes" to ${LANES}: median ${ms(median(all))}, p95 ${ms(p95(all))}`,
      `  in all: median ${ms(median(total))} (${ratio(median(total), 1000)}), p95 ${ms(p95(total))} (${ratio(p95(total), 1000)}) (budget 1000 ms)`,
      `  long tasks in the slowest-tasked run: ${renderTasks.count}, longest ${ms(renderTasks.max)}, ${ms(renderTasks.total)} in all`,
      `status change through the API to its block on the open schedule (${changes.length}, en route; ${lanesAfter} lanes shown after): median ${ms(median(changes))}, p95 ${ms(p95(changes))}`,
      `  long tasks meanwhile: ${liveTasks.count}, longest ${ms(liveTasks.max)}, ${ms(liveTasks.total)} in all`,
      ...drop,
      ...profile,
    ];
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "fd-bench-console-"));
  const out = join(work, "console");
  await build({
    configFile: join(ROOT, "console", "vite.config.ts"),
    logLevel: "error",
    build: { outDir: out, manifest: true },
  });
  // The board's JavaScript: the entry chunk and what it imports statically. The map's code and its state
  // shapes are dynamic imports, fetched the first time the map is shown, and measured apart.
  const manifest = JSON.parse(readFileSync(join(out, ".vite", "manifest.json"), "utf8")) as Record<
    string,
    { file: string; isEntry?: boolean; imports?: string[] }
  >;
  const gzipped = (file: string) => gzipSync(readFileSync(join(out, file))).length;
  const board = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || board.has(chunk.file)) return;
    board.add(chunk.file);
    for (const k of chunk.imports ?? []) visit(k);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  const js = Object.values(manifest).filter((c) => c.file.endsWith(".js"));
  const lazy = js.filter((c) => !board.has(c.file));
  const gz = [...board].filter((f) => f.endsWith(".js")).reduce((n, f) => n + gzipped(f), 0);
  const lazyOf = (name: RegExp) =>
    lazy.filter((c) => name.test(c.file)).reduce((n, c) => n + gzipped(c.file), 0);
  const mapCode = lazyOf(/map-view/);
  const mapShapes = lazyOf(/states-10m/);
  // The Schedule view: in the board's files (a static import) or a lazy chunk of its own.
  const scheduleIn = [...board].some((f) => readFileSync(join(out, f), "utf8").includes("Show all lanes"))
    ? "the board's files (imported statically)"
    : (lazy.find((c) => readFileSync(join(out, c.file), "utf8").includes("Show all lanes"))?.file ??
      "no file found");

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  const boardServer = await serve(join(work, "board"), out);
  const scheduleServer = await serve(join(work, "schedule"), out);
  try {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    process.stdout.write(
      [
        `board's JavaScript: ${board.size} file(s), ${kb(gz)} gzipped (budget 150 KB, ${ratio(gz, 150 * 1024)}); the Schedule view's code is in ${scheduleIn}`,
        `loaded with the map: its code ${kb(mapCode)}, the state shapes ${kb(mapShapes)} gzipped (${lazy.length} lazy file(s), ${kb(lazy.reduce((n, c) => n + gzipped(c.file), 0))} in all)`,
        "",
      ].join("\n"),
    );
    process.stdout.write(`${(await boardBench(browser, boardServer)).join("\n")}\n`);
    process.stdout.write(`${(await scheduleBench(browser, scheduleServer, out)).join("\n")}\n`);
  } finally {
    await browser.close();
    await boardServer.close();
    await scheduleServer.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
