// How the evals state a figure: a value with its sample (the denominator) and unit, rounded as the
// methodology says (ratios to 4 decimals, latencies to the microsecond). Shared with evals-series.ts.

export const round = (v: number | null, decimals: number) =>
  v === null || !Number.isFinite(v) ? null : Math.round(v * 10 ** decimals) / 10 ** decimals;

export const ratio = (num: number, den: number) => ({
  value: den === 0 ? null : round(num / den, 4),
  sample_size: den,
  unit: "ratio",
});

/** A mean of per-order ratios kept in parts per million. */
export const meanPpm = (ppm: number, n: number) => ({
  value: n === 0 ? null : round(ppm / n / 1e6, 4),
  sample_size: n,
  unit: "ratio",
});

export const ms = (v: number | null, n: number) => ({ value: round(v, 3), sample_size: n, unit: "ms" });
