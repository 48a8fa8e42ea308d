// The map's clustering of dense points, apart from any way of drawing them: a grid over the frame at the
// map's zoom, each cell holding many points drawn as one cluster with their count. Supercluster would do
// this (and better, by distance rather than by cell), but it is not among the console's packages; the
// map's layers are a few thousand points at most, and one pass over a grid is enough for them. Pure
// functions, no imports: the unit tests (test/console/map-clustering.test.ts) run them as they are.

/** A point of a layer where the projection put it, in the frame's units at zoom 1. */
export interface FramePoint {
  x: number;
  y: number;
}

export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface Cluster<P extends FramePoint> {
  /** The cell's key at this zoom ("12:7"): stable while the zoom does not change (panning keeps it). */
  id: string;
  /** Where it is drawn: its members' centroid, in the frame's units at zoom 1. */
  x: number;
  y: number;
  members: P[];
  /** Its members' extent, to zoom into it. */
  bounds: Box;
}

export interface GridOptions {
  /** A cell's side, in pixels on the screen: the grid gets finer as the map zooms in. */
  cell: number;
  /**
   * The fewest points a cell turns into a cluster. Fewer are drawn one by one, spread around their
   * spot: a few points stay readable and clickable each; many would cover each other.
   */
  minPoints: number;
}

/**
 * Groups a layer's points at zoom `k`: the frame is cut into cells `cell / k` units wide (anchored at the
 * frame's origin, so that panning never regroups them, only zooming does); a cell with `minPoints` or more
 * becomes one cluster at its members' centroid, the points of the others stay single. The input's order
 * is kept among the singles and among each cluster's members.
 */
export function gridCluster<P extends FramePoint>(
  points: readonly P[],
  k: number,
  options: GridOptions,
): { clusters: Array<Cluster<P>>; singles: P[] } {
  const size = options.cell / k;
  const cells = new Map<string, P[]>();
  for (const p of points) {
    const key = `${Math.floor(p.x / size)}:${Math.floor(p.y / size)}`;
    const cell = cells.get(key);
    if (cell) cell.push(p);
    else cells.set(key, [p]);
  }
  const clusters: Array<Cluster<P>> = [];
  const grouped = new Set<P>();
  for (const [id, members] of cells) {
    if (members.length < options.minPoints) continue;
    let sx = 0;
    let sy = 0;
    for (const m of members) {
      sx += m.x;
      sy += m.y;
      grouped.add(m);
    }
    clusters.push({
      id,
      x: sx / members.length,
      y: sy / members.length,
      members,
      bounds: boundsOf(members),
    });
  }
  return { clusters, singles: points.filter((p) => !grouped.has(p)) };
}

/** The smallest box holding every point (a point's own, of no size, for one). */
export function boundsOf(points: readonly FramePoint[]): Box {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x);
    y1 = Math.max(y1, p.y);
  }
  return { x0, y0, x1, y1 };
}

/**
 * How many of each value, most urgent first: `urgency` lists the values in that order (the legend's);
 * a value missing from it comes last. The first entry is the cluster's colour: the most urgent status
 * among its orders, so that one order that needs a dispatcher is not lost in a cluster of fifty accepted.
 */
export function tally<S>(values: Iterable<S>, urgency: readonly S[]): Array<[S, number]> {
  const counts = new Map<S, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const rank = (s: S) => {
    const i = urgency.indexOf(s);
    return i === -1 ? urgency.length : i;
  };
  return [...counts].sort((a, b) => rank(a[0]) - rank(b[0]));
}
