// The map's zoom and pan as one transform of the frame (d3-zoom's, without d3-zoom, which is not among
// the console's packages): a point at (x, y) in the frame's units at zoom 1 is drawn at
// (x * k + tx, y * k + ty). The state shapes take it as an SVG transform; the points are placed with it,
// so that they keep their size at every zoom. Pure functions, no imports (unit-tested as they are).

export interface View {
  k: number;
  tx: number;
  ty: number;
}

export interface Frame {
  width: number;
  height: number;
  /** The deepest zoom. The shallowest is 1: the whole frame. */
  maxK: number;
}

export const WHOLE: View = { k: 1, tx: 0, ty: 0 };

/** The view kept within bounds: a zoom from 1 to `maxK`, and no pan past the frame's edges (at zoom 1,
 * no pan at all). */
export function clampView(v: View, f: Frame): View {
  const k = Math.min(Math.max(v.k, 1), f.maxK);
  return {
    k,
    tx: Math.min(0, Math.max(f.width - f.width * k, v.tx)),
    ty: Math.min(0, Math.max(f.height - f.height * k, v.ty)),
  };
}

/** Zoomed by `factor` about the frame's point (px, py) as drawn, which stays where it is. */
export function zoomAbout(v: View, factor: number, px: number, py: number, f: Frame): View {
  const k = Math.min(Math.max(v.k * factor, 1), f.maxK);
  const at = k / v.k;
  return clampView({ k, tx: px - (px - v.tx) * at, ty: py - (py - v.ty) * at }, f);
}

/** Moved by (dx, dy) in the frame's units as drawn (a drag, an arrow key). */
export function panBy(v: View, dx: number, dy: number, f: Frame): View {
  return clampView({ k: v.k, tx: v.tx + dx, ty: v.ty + dy }, f);
}

/**
 * The view that shows the box (in units at zoom 1) whole, centred, `pad` units from the edges drawn,
 * and at least `minK` deep (a cluster's members on one spot have a box of no size: the deepest zoom).
 */
export function zoomToBox(
  box: { x0: number; y0: number; x1: number; y1: number },
  minK: number,
  pad: number,
  f: Frame,
): View {
  const w = Math.max(box.x1 - box.x0, 1e-9);
  const h = Math.max(box.y1 - box.y0, 1e-9);
  const fit = Math.min((f.width - 2 * pad) / w, (f.height - 2 * pad) / h);
  const k = Math.min(Math.max(fit, minK, 1), f.maxK);
  const cx = (box.x0 + box.x1) / 2;
  const cy = (box.y0 + box.y1) / 2;
  return clampView({ k, tx: f.width / 2 - cx * k, ty: f.height / 2 - cy * k }, f);
}
