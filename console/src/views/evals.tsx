// The public evals page (no key): the figures of GET /api/dispatch/analytics/evals for 7, 30 or 90 days,
// the orders by status as a chart, the methodology, and plainly that the figures are self-reported.

import { useEffect, useState } from "preact/hooks";
import { ApiProblem, get } from "../api";
import { STATUS_LABEL } from "../format";
import type { OrderStatus } from "../types";
import { EvalsSeriesCharts } from "./evals-series";

interface Figure {
  value: number | null;
  sample_size: number;
  unit: "ratio" | "ms" | string;
}

interface Evals {
  period: string;
  window: { start: string; end: string };
  generated_at: string;
  estimated: boolean;
  goal_fulfillment: Record<string, unknown>;
  operations: Record<string, unknown> & {
    orders_by_status: Record<OrderStatus, number>;
    orders_received: number;
  };
  trust_signals: Record<string, unknown> & {
    audit_log?: { records: number; latest_checkpoint: { tree_size: number; timestamp: string } | null };
  };
  methodology: string;
}

const PERIODS = [
  { id: "rolling_7d", label: "7 days" },
  { id: "rolling_30d", label: "30 days" },
  { id: "rolling_90d", label: "90 days" },
];

const CARDS: Array<{
  group: "goal_fulfillment" | "operations" | "trust_signals";
  key: string;
  label: string;
}> = [
  { group: "goal_fulfillment", key: "completion_rate", label: "Completion rate" },
  { group: "goal_fulfillment", key: "completion_rate_after_acceptance", label: "Completed after acceptance" },
  { group: "operations", key: "auto_match_rate", label: "Auto-matched" },
  { group: "operations", key: "dispatch_latency_p50", label: "Dispatch latency p50" },
  { group: "operations", key: "dispatch_latency_p95", label: "Dispatch latency p95" },
  { group: "operations", key: "acceptance_latency_p50", label: "Acceptance latency p50" },
  { group: "trust_signals", key: "human_override_rate", label: "Human override rate" },
  { group: "trust_signals", key: "redispatch_rate", label: "Re-dispatch rate" },
];

function isFigure(v: unknown): v is Figure {
  return typeof v === "object" && v !== null && "value" in v && "unit" in v;
}

function shown(f: Figure): string {
  if (f.value === null) return "—";
  if (f.unit === "ratio") return `${(f.value * 100).toFixed(1)} %`;
  if (f.unit === "ms") {
    if (f.value < 1000) return `${Math.round(f.value)} ms`;
    return f.value >= 60_000 ? `${(f.value / 60_000).toFixed(1)} min` : `${(f.value / 1000).toFixed(1)} s`;
  }
  return String(f.value);
}

export function EvalsPage() {
  const [period, setPeriod] = useState("rolling_30d");
  const [evals, setEvals] = useState<Evals | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stale = false;
    get<Evals>("/api/dispatch/analytics/evals", { period })
      .then((e) => {
        if (!stale) {
          setEvals(e);
          setError(null);
        }
      })
      .catch((err) => {
        if (!stale) setError(err instanceof ApiProblem ? err.message : "The evals could not be loaded.");
      });
    return () => {
      stale = true;
    };
  }, [period]);
  const byStatus = evals
    ? (Object.entries(evals.operations.orders_by_status) as Array<[OrderStatus, number]>)
    : [];
  const max = Math.max(1, ...byStatus.map(([, n]) => n));
  return (
    <div class="evals-page">
      <header class="topbar">
        <div class="brand">
          <span class="logo" aria-hidden="true">
            fd
          </span>
          <span class="brand-name">field-dispatch</span>
        </div>
        <a class="btn btn-quiet back" href="/console/">
          Console
        </a>
      </header>
      <main class="content">
        <div class="board-head">
          <h1>Evals</h1>
          <nav class="tabs" aria-label="Period">
            {PERIODS.map((p) => (
              <button
                key={p.id}
                type="button"
                class={`tab ${period === p.id ? "tab-on" : ""}`}
                aria-pressed={period === p.id}
                onClick={() => setPeriod(p.id)}
              >
                {p.label}
              </button>
            ))}
          </nav>
        </div>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {evals && (
          <>
            <p class="estimated" data-estimated={String(evals.estimated)}>
              {evals.estimated
                ? "Estimated: these figures are computed and reported by this service itself, not audited by anyone else."
                : "Measured."}{" "}
              Live orders received {new Date(evals.window.start).toLocaleDateString("en-US")} to{" "}
              {new Date(evals.window.end).toLocaleDateString("en-US")}; sandbox orders are left out.
            </p>
            <div class="figures">
              <div class="figure card" data-figure="orders_received">
                <span class="figure-label">Orders received</span>
                <span class="figure-value">{evals.operations.orders_received}</span>
              </div>
              {CARDS.map((c) => {
                const f = evals[c.group][c.key];
                if (!isFigure(f)) return null;
                return (
                  <div key={c.key} class="figure card" data-figure={c.key}>
                    <span class="figure-label">{c.label}</span>
                    <span class="figure-value">{shown(f)}</span>
                    <span class="figure-n">n = {f.sample_size}</span>
                  </div>
                );
              })}
            </div>
            <section class="card chart-card" aria-labelledby="by-status">
              <h2 id="by-status">Live orders by status, whole period</h2>
              <ul class="bars">
                {byStatus.map(([status, n]) => (
                  <li key={status} class="bar-row" data-status={status}>
                    <span class="bar-label">{STATUS_LABEL[status] ?? status}</span>
                    <span class="bar-track">
                      <span class={`bar st-${status} w-${Math.round((n / max) * 20) * 5}`} />
                    </span>
                    <span class="bar-n">{n}</span>
                  </li>
                ))}
              </ul>
            </section>
            <EvalsSeriesCharts period={period} />
            {evals.trust_signals.audit_log?.latest_checkpoint && (
              <p class="muted">
                Audit log: {evals.trust_signals.audit_log.records} records, the latest signed checkpoint
                covering {evals.trust_signals.audit_log.latest_checkpoint.tree_size}.
              </p>
            )}
            <details class="methodology-box">
              <summary>Methodology: how each figure above is computed</summary>
              <p class="methodology">{evals.methodology}</p>
            </details>
          </>
        )}
      </main>
    </div>
  );
}
