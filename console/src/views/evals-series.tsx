// The evals per UTC day (GET /api/dispatch/analytics/evals/series), as charts: orders received by status
// (stacked bars), completion rate, dispatch and acceptance latency (p50 and p95), human override rate.
// Live or sandbox orders: a fresh install has only the sandbox's simulated traffic.

import { useEffect, useState } from "preact/hooks";
import { ApiProblem, get } from "../api";
import { everyStatus, STATUS_LABEL } from "../format";
import type { OrderStatus } from "../types";
import { dayLabel, LineChart, StackedBars, ticks } from "./charts";

interface Metric {
  value: number | null;
  sample_size: number;
  unit: string;
}

interface SeriesDay {
  day: string;
  partial: boolean;
  orders_received: number;
  orders_by_status: Record<OrderStatus, number>;
  completion_rate: Metric;
  dispatch_latency_p50: Metric;
  dispatch_latency_p95: Metric;
  acceptance_latency_p50: Metric;
  acceptance_latency_p95: Metric;
  human_override_rate: Metric;
}

interface Series {
  period: string;
  mode: "live" | "sandbox";
  generated_at: string;
  estimated: boolean;
  days: SeriesDay[];
  methodology: string;
}

/** Bottom to top: the work's course, then the ways out of it. */
const STACK: OrderStatus[] = everyStatus([
  "paid",
  "approved",
  "invoice_rejected",
  "revision_requested",
  "invoiced",
  "completed",
  "on_site",
  "en_route",
  "accepted",
  "offered",
  "received",
  "needs_dispatcher",
  "cannot_complete",
  "cancelled",
]);

const percent = (v: number) => `${Math.round(v * 100)} %`;

/** Milliseconds in the unit that reads best for the largest value. */
function timeUnit(max: number): { div: number; unit: string } {
  if (max >= 120_000) return { div: 60_000, unit: "min" };
  if (max >= 2_000) return { div: 1_000, unit: "s" };
  return { div: 1, unit: "ms" };
}

/** Milliseconds shown in the unit that reads best for `max` (one unit for a whole chart). */
function durationIn(max: number): (v: number) => string {
  const { div, unit } = timeUnit(max);
  return (v) => {
    const n = v / div;
    return `${n >= 10 || div === 1 || Number.isInteger(n) ? Math.round(n) : n.toFixed(1)} ${unit}`;
  };
}

const largest = (...lists: Array<Array<number | null>>) =>
  Math.max(0, ...lists.flat().filter((v): v is number => v !== null));

const values = (days: SeriesDay[], pick: (d: SeriesDay) => Metric) => days.map((d) => pick(d).value);
const samples = (days: SeriesDay[], pick: (d: SeriesDay) => Metric) => days.map((d) => pick(d).sample_size);

/** "mean 92 % over 12 days with outcomes, from 80 % to 100 %": a chart's figures in one sentence. */
function rangeSummary(vals: Array<number | null>, fmt: (v: number) => string, what: string): string {
  const known = vals.filter((v): v is number => v !== null);
  if (known.length === 0) return `No day of the period has ${what}.`;
  const lo = Math.min(...known);
  const hi = Math.max(...known);
  return `${known.length} of ${vals.length} days have ${what}: from ${fmt(lo)} to ${fmt(hi)}.`;
}

type Mode = "live" | "sandbox";

/** The period's series of `mode`'s orders, loaded again when either changes. */
function useSeries(period: string, mode: Mode): { series: Series | null; error: string | null } {
  const [series, setSeries] = useState<Series | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stale = false;
    get<Series>("/api/dispatch/analytics/evals/series", { period, mode })
      .then((s) => {
        if (!stale) {
          setSeries(s);
          setError(null);
        }
      })
      .catch((err) => {
        if (!stale)
          setError(err instanceof ApiProblem ? err.message : "The daily series could not be loaded.");
      });
    return () => {
      stale = true;
    };
  }, [period, mode]);
  return { series, error };
}

/** Live orders, unless the first period read has none while the sandbox has some (a fresh install: only
 * the sandbox's simulated traffic): then the sandbox's, and the note says why. */
export function EvalsSeriesCharts({ period }: { period: string }) {
  const [mode, setMode] = useState<Mode>("live");
  /** Until the dispatcher picks a mode, the page may choose the one that has data. */
  const [chosen, setChosen] = useState(false);
  const [fellBack, setFellBack] = useState(false);
  const { series, error } = useSeries(period, mode);
  useEffect(() => {
    if (chosen || !series || series.mode !== "live" || mode !== "live") return;
    if (series.days.every((d) => d.orders_received === 0)) {
      setFellBack(true);
      setMode("sandbox");
    }
  }, [series, chosen, mode]);
  const pick = (m: Mode) => {
    setChosen(true);
    setFellBack(false);
    setMode(m);
  };
  return (
    <section class="series" aria-labelledby="per-day" data-mode={series?.mode}>
      <div class="board-head">
        <h2 id="per-day">Per day</h2>
        <nav class="tabs" aria-label="Orders of">
          {(["live", "sandbox"] as const).map((m) => (
            <button
              key={m}
              type="button"
              class={`tab ${mode === m ? "tab-on" : ""}`}
              aria-pressed={mode === m}
              onClick={() => pick(m)}
            >
              {m === "live" ? "Live orders" : "Sandbox orders"}
            </button>
          ))}
        </nav>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {series && (
        <>
          {fellBack && series.mode === "sandbox" && (
            <p class="notice" data-fallback="sandbox">
              No live order in this period: showing the sandbox's orders.
            </p>
          )}
          {series.days.every((d) => d.orders_received === 0) && (
            <p class="notice" data-empty-series="true">
              No {series.mode} order was received in this period: the charts have no data.
            </p>
          )}
          <p class="series-note" data-estimated={String(series.estimated)}>
            {series.estimated ? "Estimated: self-reported by this service from its own records. " : ""}
            {series.mode === "live"
              ? "Orders of live keys only."
              : "Sandbox orders only: test keys and the simulated traffic, not real work."}{" "}
            Each day counts the orders received that UTC day, in their status now; today is partial.
          </p>
          <OrdersByStatusChart days={series.days} />
          <RateCharts days={series.days} />
          <LatencyCharts days={series.days} />
          <details class="methodology-box">
            <summary>Methodology of the daily figures</summary>
            <p class="methodology">{series.methodology}</p>
            <p class="muted">
              Source:{" "}
              <code>{`GET /api/dispatch/analytics/evals/series?period=${series.period}&mode=${series.mode}`}</code>
              , generated {new Date(series.generated_at).toLocaleString("en-US")}.
            </p>
          </details>
        </>
      )}
    </section>
  );
}

/** Orders received per day, stacked by their status now. */
function OrdersByStatusChart({ days }: { days: SeriesDay[] }) {
  const received = days.reduce((s, d) => s + d.orders_received, 0);
  const busiest = days.reduce<SeriesDay | null>(
    (b, d) => (b === null || d.orders_received > b.orders_received ? d : b),
    null,
  );
  return (
    <StackedBars
      chart="orders-by-status"
      title="Orders received per day, by status now"
      summary={
        received === 0
          ? "No order was received in the period."
          : `${received} orders over ${days.length} days; the busiest, ${busiest ? dayLabel(busiest.day) : ""}, had ${busiest?.orders_received}.`
      }
      days={days.map((d) => ({ day: d.day, counts: d.orders_by_status }))}
      keys={STACK}
      label={(k) => STATUS_LABEL[k as OrderStatus] ?? k}
      cls={(k) => `sf-${k}`}
    />
  );
}

/** The completion rate and the human override rate per day. */
function RateCharts({ days }: { days: SeriesDay[] }) {
  const labels = days.map((d) => d.day);
  return (
    <div class="chart-grid">
      <LineChart
        chart="completion-rate"
        title="Completion rate per day"
        summary={rangeSummary(
          values(days, (d) => d.completion_rate),
          percent,
          "orders with an outcome",
        )}
        days={labels}
        lines={[
          {
            key: "completion_rate",
            label: "Completion rate",
            values: values(days, (d) => d.completion_rate),
            n: samples(days, (d) => d.completion_rate),
          },
        ]}
        format={percent}
        max={1}
      />
      <LineChart
        chart="override-rate"
        title="Human override rate per day"
        summary={rangeSummary(
          values(days, (d) => d.human_override_rate),
          percent,
          "orders dispatched",
        )}
        days={labels}
        lines={[
          {
            key: "human_override_rate",
            label: "Override rate",
            values: values(days, (d) => d.human_override_rate),
            n: samples(days, (d) => d.human_override_rate),
          },
        ]}
        format={percent}
        max={1}
      />
    </div>
  );
}

/** Ticks in the unit that reads best for the chart's largest value (ms, s or min). */
function latencyTicks(max: number): number[] {
  const { div } = timeUnit(max);
  return ticks(max / div).map((t) => t * div);
}

/** Dispatch and acceptance latency per day, p50 and p95, each in the unit that reads best for it. */
function LatencyCharts({ days }: { days: SeriesDay[] }) {
  const labels = days.map((d) => d.day);
  const dispatchP50 = values(days, (d) => d.dispatch_latency_p50);
  const dispatchP95 = values(days, (d) => d.dispatch_latency_p95);
  const acceptP50 = values(days, (d) => d.acceptance_latency_p50);
  const acceptP95 = values(days, (d) => d.acceptance_latency_p95);
  const dispatchTime = durationIn(largest(dispatchP50, dispatchP95));
  const acceptTime = durationIn(largest(acceptP50, acceptP95));
  return (
    <div class="chart-grid">
      <LineChart
        chart="dispatch-latency"
        title="Dispatch latency per day (received to first offer)"
        summary={rangeSummary(dispatchP50, dispatchTime, "a first offer (median shown)")}
        days={labels}
        lines={[
          {
            key: "p50",
            label: "p50",
            values: dispatchP50,
            n: samples(days, (d) => d.dispatch_latency_p50),
          },
          { key: "p95", label: "p95", values: dispatchP95 },
        ]}
        format={dispatchTime}
        tickMax={latencyTicks}
      />
      <LineChart
        chart="acceptance-latency"
        title="Acceptance latency per day (received to first acceptance)"
        summary={rangeSummary(acceptP50, acceptTime, "an acceptance (median shown)")}
        days={labels}
        lines={[
          {
            key: "p50",
            label: "p50",
            values: acceptP50,
            n: samples(days, (d) => d.acceptance_latency_p50),
          },
          { key: "p95", label: "p95", values: acceptP95 },
        ]}
        format={acceptTime}
        tickMax={latencyTicks}
      />
    </div>
  );
}
