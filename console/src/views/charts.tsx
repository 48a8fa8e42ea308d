// Charts drawn by hand in SVG (no chart library): a stacked bar chart of counts per day, and a line chart
// of one or more figures per day. Scales are plain linear maps; ticks are "nice" steps of 1, 2 or 5. Every
// chart has a title, a one-sentence text summary (the SVG's description) and the same data as a table,
// so that nothing is only in the picture. Colours come from classes (the page's CSP allows no inline style).

import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

const PAD = { top: 12, right: 12, bottom: 28, left: 56 };
/** The drawing's size in its own units: about the size it is shown at, so that the text stays ~11 px. */
const SIZE = { wide: { W: 1140, H: 260 }, half: { W: 540, H: 220 } };
type Size = keyof typeof SIZE;

function plot(size: Size) {
  const { W, H } = SIZE[size];
  return { W, H, PLOT_W: W - PAD.left - PAD.right, PLOT_H: H - PAD.top - PAD.bottom };
}

/** Up to about `count` round tick values from 0 to at least `max`. */
export function ticks(max: number, count = 4): number[] {
  const top = max > 0 ? max : 1;
  const raw = top / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = 0; v < top + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  if ((out[out.length - 1] ?? 0) < top) out.push(out.length * step);
  return out;
}

/** "2026-11-24" -> "Nov 24" (the day is UTC: formatted in UTC). */
export function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString("en-US", {
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });
}

/** Which days get an axis label: about 7 whatever the period. */
function labelled(n: number): (i: number) => boolean {
  const every = Math.max(1, Math.ceil(n / 7));
  return (i) => i % every === 0 || i === n - 1;
}

interface Frame {
  id: string;
  title: string;
  summary: string;
  days: string[];
  yTicks: number[];
  yFormat: (v: number) => string;
  children: ComponentChildren;
  table: ComponentChildren;
  legend?: ComponentChildren;
  chart: string;
  size: Size;
  /** Nothing to draw: the chart says so instead of drawing an axis of nothing. */
  empty?: boolean;
}

function ChartFrame(f: Frame) {
  const { W, H, PLOT_W, PLOT_H } = plot(f.size);
  const top = f.yTicks[f.yTicks.length - 1] ?? 1;
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const step = PLOT_W / Math.max(1, f.days.length);
  const shows = labelled(f.days.length);
  return (
    <figure class="card chart-card chart" data-chart={f.chart} aria-labelledby={`${f.id}-t`}>
      <figcaption>
        <h2 id={`${f.id}-t`}>{f.title}</h2>
        <p class="chart-summary" id={`${f.id}-s`}>
          {f.summary}
        </p>
      </figcaption>
      {f.empty ? (
        <p class="chart-empty" data-empty="true">
          No data in this period.
        </p>
      ) : (
        <>
          {f.legend}
          <svg
            class="chart-svg"
            viewBox={`0 0 ${W} ${H}`}
            role="img"
            aria-labelledby={`${f.id}-t`}
            aria-describedby={`${f.id}-s`}
          >
            <title>{f.title}</title>
            <g class="grid">
              {f.yTicks.map((t) => (
                <g key={t}>
                  <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
                  <text x={PAD.left - 6} y={y(t) + 4} class="tick tick-y">
                    {f.yFormat(t)}
                  </text>
                </g>
              ))}
              {f.days.map((d, i) =>
                shows(i) ? (
                  <text key={d} x={PAD.left + step * (i + 0.5)} y={H - 8} class="tick tick-x">
                    {dayLabel(d)}
                  </text>
                ) : null,
              )}
            </g>
            {f.children}
          </svg>
        </>
      )}
      <details class="chart-table">
        <summary>Table of the data</summary>
        {f.table}
      </details>
    </figure>
  );
}

export interface StackedDay {
  day: string;
  counts: Record<string, number>;
}

/** Counts per day stacked by category (bottom to top in the order of `keys`). */
export function StackedBars(props: {
  chart: string;
  title: string;
  summary: string;
  days: StackedDay[];
  keys: string[];
  label: (key: string) => string;
  cls: (key: string) => string;
}) {
  const id = useId();
  const { PLOT_W, PLOT_H } = plot("wide");
  const totals = props.days.map((d) => props.keys.reduce((s, k) => s + (d.counts[k] ?? 0), 0));
  const yTicks = ticks(Math.max(0, ...totals));
  const top = yTicks[yTicks.length - 1] ?? 1;
  const step = PLOT_W / Math.max(1, props.days.length);
  const bw = Math.max(2, step * 0.7);
  const used = props.keys.filter((k) => props.days.some((d) => (d.counts[k] ?? 0) > 0));
  return (
    <ChartFrame
      id={id}
      chart={props.chart}
      size="wide"
      empty={totals.every((t) => t === 0)}
      title={props.title}
      summary={props.summary}
      days={props.days.map((d) => d.day)}
      yTicks={yTicks}
      yFormat={(v) => String(v)}
      legend={
        <ul class="legend" aria-hidden="true">
          {used.map((k) => (
            <li key={k} class="legend-item">
              <span class={`swatch ${props.cls(k)}`} />
              {props.label(k)}
            </li>
          ))}
        </ul>
      }
      table={
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {used.map((k) => (
                <th key={k} scope="col">
                  {props.label(k)}
                </th>
              ))}
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {props.days.map((d, i) => (
              <tr key={d.day}>
                <th scope="row">{d.day}</th>
                {used.map((k) => (
                  <td key={k}>{d.counts[k] ?? 0}</td>
                ))}
                <td>{totals[i]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      {props.days.map((d, i) => {
        let acc = 0;
        const x = PAD.left + step * i + (step - bw) / 2;
        return (
          <g key={d.day} class="bar-day" data-day={d.day} data-total={totals[i]}>
            {props.keys.map((k) => {
              const n = d.counts[k] ?? 0;
              if (n === 0) return null;
              const y0 = PAD.top + PLOT_H - (acc / top) * PLOT_H;
              acc += n;
              const y1 = PAD.top + PLOT_H - (acc / top) * PLOT_H;
              return (
                <rect
                  key={k}
                  class={`seg ${props.cls(k)}`}
                  data-key={k}
                  x={x}
                  y={y1}
                  width={bw}
                  height={y0 - y1}
                >
                  <title>{`${d.day}: ${n} ${props.label(k).toLowerCase()}`}</title>
                </rect>
              );
            })}
          </g>
        );
      })}
    </ChartFrame>
  );
}

export interface Line {
  key: string;
  label: string;
  values: Array<number | null>;
  /** The sample behind each value (shown in the table and the point's tooltip). */
  n?: number[];
}

/** One or more figures per day as lines with a point per day that has a value (null: no point, a gap). */
export function LineChart(props: {
  chart: string;
  title: string;
  summary: string;
  days: string[];
  lines: Line[];
  format: (v: number) => string;
  /** A fixed top of the scale (1 for ratios); otherwise from the data. */
  max?: number;
  /** Tick values for the scale's own unit (e.g. ms shown as s): the data's maximum in that unit. */
  tickMax?: (max: number) => number[];
}) {
  const id = useId();
  const { PLOT_W, PLOT_H } = plot("half");
  const values = props.lines.flatMap((l) => l.values.filter((v): v is number => v !== null));
  const dataMax = props.max ?? Math.max(0, ...values);
  const yTicks = props.tickMax ? props.tickMax(dataMax) : ticks(dataMax);
  const top = yTicks[yTicks.length - 1] ?? 1;
  const step = PLOT_W / Math.max(1, props.days.length);
  const x = (i: number) => PAD.left + step * (i + 0.5);
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  return (
    <ChartFrame
      id={id}
      chart={props.chart}
      size="half"
      empty={values.length === 0}
      title={props.title}
      summary={props.summary}
      days={props.days}
      yTicks={yTicks}
      yFormat={props.format}
      legend={
        props.lines.length > 1 ? (
          <ul class="legend" aria-hidden="true">
            {props.lines.map((l, i) => (
              <li key={l.key} class="legend-item">
                <span class={`swatch line-${i}`} />
                {l.label}
              </li>
            ))}
          </ul>
        ) : undefined
      }
      table={
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {props.lines.map((l) => (
                <th key={l.key} scope="col">
                  {l.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.days.map((d, i) => (
              <tr key={d}>
                <th scope="row">{d}</th>
                {props.lines.map((l) => {
                  const v = l.values[i];
                  return (
                    <td key={l.key}>
                      {v === null || v === undefined ? "—" : props.format(v)}
                      {l.n ? ` (n = ${l.n[i] ?? 0})` : ""}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      {props.lines.map((l, li) => {
        // Runs of consecutive days with a value, each drawn as its own path.
        const runs: string[] = [];
        let run = "";
        l.values.forEach((v, i) => {
          if (v === null) {
            if (run) runs.push(run);
            run = "";
          } else run += `${run ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
        });
        if (run) runs.push(run);
        return (
          <g key={l.key} class={`series line-${li}`} data-series={l.key}>
            {runs.map((d) => (
              <path key={d} d={d} class="line" />
            ))}
            {l.values.map((v, i) =>
              v === null ? null : (
                <circle key={props.days[i]} class="pt" data-day={props.days[i]} cx={x(i)} cy={y(v)} r={3.5}>
                  <title>{`${props.days[i]}: ${l.label} ${props.format(v)}${l.n ? `, n = ${l.n[i] ?? 0}` : ""}`}</title>
                </circle>
              ),
            )}
          </g>
        );
      })}
    </ChartFrame>
  );
}
