// The SVG base map: the states of us-atlas (TopoJSON, bundled, loaded the first time a map is shown),
// projected by d3-geo (Albers USA with Alaska, Hawaii and Puerto Rico inset), and the layers' points on
// top, contractors under orders. The map zooms and pans (the wheel, a drag, the buttons, the keys:
// zoom.ts); at a shallow zoom, dense points are drawn as clusters with their count (clustering.ts), and
// a cluster clicked zooms into it. No tiles, no network beyond this origin. A MapLibre map with a local
// style could replace this component: it takes the layers' features (layers.ts) and the same callbacks.

import { geoCircle, geoPath } from "d3-geo";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { feature, mesh } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import { STATUS_LABEL, titleCase } from "../format";
import type { OrderStatus } from "../types";
import { type Cluster, gridCluster, tally } from "./clustering";
import { CLOSED, type ContractorFeature, LEGEND, MILES_PER_DEGREE, type OrderFeature } from "./layers";
import { albersUsaWithPuertoRico, HEIGHT, insetBoxes, WIDTH } from "./projection";
import { type Frame, panBy, type View, WHOLE, zoomAbout, zoomToBox } from "./zoom";

export interface BaseMapProps {
  orders: OrderFeature[];
  contractors: ContractorFeature[];
  /** The contractor whose base and service area are shown (hovered, focused or pinned). */
  shownContractor: string | null;
  onShowContractor: (contractorId: string | null, pin?: boolean) => void;
  pinnedContractor: string | null;
  onOpenOrder: (orderId: string) => void;
  label: string;
}

interface Shapes {
  states: Array<{ id: string; name: string; d: string }>;
  borders: string;
  outline: string;
}

const projection = albersUsaWithPuertoRico();
const path = geoPath(projection);

/** Zoom 1 shows the whole frame (a pixel is about 3 miles); 64, a city's ZIPs apart (a pixel is about
 * 250 feet, the frame some 45 miles across). */
const FRAME: Frame = { width: WIDTH, height: HEIGHT, maxK: 64 };
/**
 * A cell of 48 pixels holding ten points or more is drawn as a cluster: fewer fit in it spread out, each
 * readable and clickable. None at the deepest zoom: what still shares a spot there is spread around it.
 */
const GRID = { cell: 48, minPoints: 10 };
/** A button's or a key's zoom step, and an arrow key's pan in the frame's pixels. */
const STEP = 2;
const PAN = 80;
/** Points this far outside the frame are not drawn (their symbols could still show at its edge). */
const MARGIN = 30;

let shapes: Promise<Shapes> | null = null;

/** The states' paths, computed once: the projection never changes (the map's transform zooms them). */
function loadShapes(): Promise<Shapes> {
  shapes ??= import("us-atlas/states-10m.json").then((m) => {
    const topo = m.default as unknown as Topology<{ states: GeometryCollection<{ name: string }> }>;
    const states = feature(topo, topo.objects.states).features.map((f) => ({
      id: String(f.id),
      name: f.properties?.name ?? "",
      d: path(f) ?? "",
    }));
    return {
      states: states.filter((s) => s.d !== ""),
      borders: path(mesh(topo, topo.objects.states, (a, b) => a !== b)) ?? "",
      outline: path(mesh(topo, topo.objects.states, (a, b) => a === b)) ?? "",
    };
  });
  return shapes;
}

/** A feature where the projection puts it, in the frame's pixels at zoom 1 (or, once spread, at the
 * map's zoom, before its pan). */
interface Placed<F> {
  feature: F;
  x: number;
  y: number;
}

/** The features the projection places (one outside every part of the map, Guam say, is left out). */
function project<F extends { geometry: { coordinates: [number, number] } }>(features: F[]): Array<Placed<F>> {
  const out: Array<Placed<F>> = [];
  for (const f of features) {
    const xy = projection(f.geometry.coordinates);
    if (xy) out.push({ feature: f, x: xy[0], y: xy[1] });
  }
  return out;
}

/** How many of the features fall outside every part of the map (Guam, American Samoa, the Northern
 * Marianas: not drawn), for the view to say so. */
export function offTheMap(features: Array<{ geometry: { coordinates: [number, number] } }>): number {
  return features.length - project(features).length;
}

/** Pixels between points spread around one spot; points closer than a cell of this size share a spot. */
const SPACING = 6;

interface Spot {
  x: number;
  y: number;
  count: number;
}

/**
 * The points at zoom `k`; points on (nearly) the same spot (the orders of one ZIP share its centroid, a
 * contractor based there too) are spread in a small sunflower around the first one placed there, so
 * that each stays visible and clickable. `spots` holds the spots taken so far, across layers.
 */
function spread<F>(points: Array<Placed<F>>, k: number, spots: Map<string, Spot>): Array<Placed<F>> {
  return points.map((p) => {
    const x = p.x * k;
    const y = p.y * k;
    const key = `${Math.round(x / SPACING)},${Math.round(y / SPACING)}`;
    const spot = spots.get(key) ?? { x, y, count: 0 };
    spots.set(key, { ...spot, count: spot.count + 1 });
    const r = SPACING * Math.sqrt(spot.count);
    const a = spot.count * 2.39996; // the golden angle
    return { feature: p.feature, x: spot.x + r * Math.cos(a), y: spot.y + r * Math.sin(a) };
  });
}

type OrderCluster = Cluster<Placed<OrderFeature>>;
type ContractorCluster = Cluster<Placed<ContractorFeature>>;

/** What is drawn at zoom `k`: each layer's clusters (at zoom 1's pixels) and single points (spread, at
 * zoom k's). Contractors first: each keeps its base's exact spot, and the orders there go round it. */
function layoutAt(
  k: number,
  orders: Array<Placed<OrderFeature>>,
  contractors: Array<Placed<ContractorFeature>>,
) {
  const group = <F,>(points: Array<Placed<F>>) =>
    k >= FRAME.maxK ? { clusters: [], singles: points } : gridCluster(points, k, GRID);
  const o = group(orders);
  const c = group(contractors);
  const spots = new Map<string, Spot>();
  const contractorPoints = spread(c.singles, k, spots);
  return {
    contractorClusters: c.clusters,
    contractors: contractorPoints,
    orderClusters: o.clusters,
    orders: spread(o.singles, k, spots),
  };
}

// The points and clusters are buttons: role, `tabindex` and keys. Lowercase `tabindex`: Preact sets an SVG
// element's attributes as written, and an SVG element's `tabIndex` attribute makes nothing focusable.
const onKey = (act: () => void) => (e: KeyboardEvent) => {
  if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    e.stopPropagation();
    act();
  }
};

/** The states' shapes once loaded (null until then), and whether loading them failed. */
function useShapes(): { base: Shapes | null; failed: boolean } {
  const [base, setBase] = useState<Shapes | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    loadShapes().then(
      (s) => live && setBase(s),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, []);
  return { base, failed };
}

export function SvgBaseMap(props: BaseMapProps) {
  const { base, failed } = useShapes();
  const stage = useRef<HTMLElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const [view, setView] = useState<View>(WHOLE);
  const handlers = usePointerZoom(svg, view, setView);
  const orders = useMemo(() => project(props.orders), [props.orders]);
  const contractors = useMemo(() => project(props.contractors), [props.contractors]);
  const layout = useMemo(() => layoutAt(view.k, orders, contractors), [view.k, orders, contractors]);
  const zoomInto = (c: { bounds: OrderCluster["bounds"] }) => {
    setView((v) => zoomToBox(c.bounds, v.k * STEP, 40, FRAME));
    stage.current?.focus({ preventScroll: true }); // the cluster is gone: the keys go on with the map
  };
  const shown = contractors.find((c) => c.feature.id === props.shownContractor);
  const spreadShown = layout.contractors.find((c) => c.feature.id === props.shownContractor);
  const shownAt = spreadShown ?? (shown ? { x: shown.x * view.k, y: shown.y * view.k } : null);
  const pan = `translate(${view.tx.toFixed(2)} ${view.ty.toFixed(2)})`;

  return (
    <section
      ref={stage}
      class="map-stage"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the map takes the arrow keys (pan) and + and − (zoom) once focused.
      tabIndex={0}
      aria-label="Map: arrow keys pan, + and − zoom, 0 shows the whole map"
      onKeyDown={onMapKey(setView)}
    >
      {/* biome-ignore lint/a11y/useSemanticElements: an SVG's points cannot sit in a fieldset; the group names them. */}
      <svg
        ref={svg}
        class={`map-svg ${view.k > 1 ? "map-zoomed" : ""}`}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="group"
        aria-label={props.label}
        data-ready={base ? "true" : "false"}
        data-zoom={view.k.toFixed(2)}
        {...handlers}
      >
        <g transform={`${pan} scale(${view.k.toFixed(4)})`}>
          <StateShapes base={base} />
          {shown && <ServiceArea feature={shown.feature} />}
        </g>
        <g transform={pan}>
          <ContractorClusters clusters={layout.contractorClusters} view={view} onZoom={zoomInto} />
          <ContractorPoints
            contractors={layout.contractors.filter((p) => inView(p, view))}
            pinned={props.pinnedContractor}
            onShowContractor={props.onShowContractor}
          />
          <OrderClusters clusters={layout.orderClusters} view={view} onZoom={zoomInto} />
          <OrderPoints
            orders={layout.orders.filter((p) => inView(p, view))}
            onOpenOrder={props.onOpenOrder}
          />
          {shown && shownAt && <Tip x={shownAt.x} y={shownAt.y} view={view} feature={shown.feature} />}
        </g>
        {!base && <Loading failed={failed} />}
      </svg>
      <ZoomButtons view={view} setView={setView} />
    </section>
  );
}

/** Whether a point at zoom k's pixels (before the pan) is in the frame as drawn. */
function inView(p: { x: number; y: number }, view: View): boolean {
  const x = p.x + view.tx;
  const y = p.y + view.ty;
  return x > -MARGIN && x < WIDTH + MARGIN && y > -MARGIN && y < HEIGHT + MARGIN;
}

/** Where a pointer is, in the frame's pixels (the SVG scales the frame to its box, keeping its shape). */
function framePoint(svg: SVGSVGElement | null, e: { clientX: number; clientY: number }) {
  if (!svg) return null;
  const r = svg.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return null;
  return { x: ((e.clientX - r.left) * WIDTH) / r.width, y: ((e.clientY - r.top) * HEIGHT) / r.height, r };
}

interface Drag {
  pointer: number;
  x: number;
  y: number;
  from: View;
  moved: boolean;
}

type SetView = (update: View | ((v: View) => View)) => void;

/**
 * The map's zoom and pan by pointer: the wheel zooms about the pointer, a drag pans (once it moves a few
 * pixels: a click on a point stays a click).
 */
function usePointerZoom(svg: { current: SVGSVGElement | null }, view: View, setView: SetView) {
  const drag = useRef<Drag | null>(null);
  return {
    onWheel: (e: WheelEvent) => {
      const p = framePoint(svg.current, e);
      // At either end of the zoom, the wheel scrolls the page as it would anywhere else.
      if (!p || (e.deltaY > 0 && view.k <= 1) || (e.deltaY < 0 && view.k >= FRAME.maxK)) return;
      e.preventDefault();
      const pixels = e.deltaY * (e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1);
      setView((v) => zoomAbout(v, Math.exp(-pixels / 300), p.x, p.y, FRAME));
    },
    onPointerDown: (e: PointerEvent) => {
      if (e.button !== 0) return;
      drag.current = { pointer: e.pointerId, x: e.clientX, y: e.clientY, from: view, moved: false };
    },
    onPointerMove: (e: PointerEvent) => {
      const d = drag.current;
      const p = framePoint(svg.current, e);
      if (!d || d.pointer !== e.pointerId || !p) return;
      if (!d.moved) {
        if (Math.hypot(e.clientX - d.x, e.clientY - d.y) < 4) return;
        d.moved = true;
        svg.current?.setPointerCapture(e.pointerId);
      }
      const scale = WIDTH / p.r.width;
      setView(panBy(d.from, (e.clientX - d.x) * scale, (e.clientY - d.y) * scale, FRAME));
    },
    onPointerUp: () => {
      drag.current = null;
    },
    onPointerCancel: () => {
      drag.current = null;
    },
  };
}

/** With the map (or anything on it) focused, the arrow keys pan, + and − zoom, 0 shows the whole map. */
const onMapKey = (setView: SetView) => (e: KeyboardEvent) => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const act = keyAction(e.key);
  if (!act) return;
  e.preventDefault();
  setView(act);
};

/** What a key does to the view, if anything. */
function keyAction(key: string): ((v: View) => View) | null {
  const pan = (dx: number, dy: number) => (v: View) => panBy(v, dx, dy, FRAME);
  const zoom = (factor: number) => (v: View) => zoomAbout(v, factor, WIDTH / 2, HEIGHT / 2, FRAME);
  switch (key) {
    case "ArrowLeft":
      return pan(PAN, 0);
    case "ArrowRight":
      return pan(-PAN, 0);
    case "ArrowUp":
      return pan(0, PAN);
    case "ArrowDown":
      return pan(0, -PAN);
    case "+":
    case "=":
      return zoom(STEP);
    case "-":
    case "_":
      return zoom(1 / STEP);
    case "0":
      return () => WHOLE;
    default:
      return null;
  }
}

/** Zoom in, zoom out, the whole map: buttons over the map's top left corner (the Pacific). */
function ZoomButtons({ view, setView }: { view: View; setView: SetView }) {
  const zoom = (factor: number) => setView((v) => zoomAbout(v, factor, WIDTH / 2, HEIGHT / 2, FRAME));
  return (
    <div class="map-zoom">
      <button type="button" aria-label="Zoom in" title="Zoom in (+)" onClick={() => zoom(STEP)}>
        +
      </button>
      <button type="button" aria-label="Zoom out" title="Zoom out (−)" onClick={() => zoom(1 / STEP)}>
        −
      </button>
      <button
        type="button"
        aria-label="Show the whole map"
        title="Show the whole map (0)"
        aria-disabled={view.k === 1}
        onClick={() => setView(WHOLE)}
      >
        ⤢
      </button>
    </div>
  );
}

/** The states, their borders and the insets' boxes (at zoom 1's pixels: the map's transform zooms them). */
function StateShapes({ base }: { base: Shapes | null }) {
  if (!base) return null;
  return (
    // biome-ignore lint/a11y/noAriaHiddenOnFocusable: the shapes are not focusable, only the points.
    <g class="map-base" aria-hidden="true">
      {base.states.map((s) => (
        <path key={s.id} class="map-state" d={s.d}>
          <title>{s.name}</title>
        </path>
      ))}
      <path class="map-borders" d={base.borders} />
      <path class="map-outline" d={base.outline} />
      {insetBoxes().map((b) => (
        <rect key={b.id} class="map-inset" x={b.x} y={b.y} width={b.width} height={b.height} />
      ))}
    </g>
  );
}

/** A line of text until the shapes are loaded. */
function Loading({ failed }: { failed: boolean }) {
  return (
    <text class="map-loading" x={WIDTH / 2} y={HEIGHT / 2}>
      {failed ? "The state shapes could not be loaded." : "Loading the map…"}
    </text>
  );
}

/** The shown contractor's service area: a circle of its radius around its base (none: anywhere in its
 * states). */
function ServiceArea({ feature: f }: { feature: ContractorFeature }) {
  const radius = f.properties.radius_miles;
  if (!radius) return null;
  const d = path(
    geoCircle()
      .center(f.geometry.coordinates)
      .radius(radius / MILES_PER_DEGREE)
      .precision(2)(),
  );
  // biome-ignore lint/a11y/noAriaHiddenOnFocusable: the area is not focusable (no pointer events).
  return d ? <path class="map-area" d={d} aria-hidden="true" /> : null;
}

/** A cluster's size: from 13 pixels (ten points) to 24 (ten thousand). */
const clusterRadius = (count: number) => Math.min(24, 9 + 3.7 * Math.log10(count));

/** The orders' clusters: each coloured by its most urgent status, with its count; a click zooms into it. */
function OrderClusters(props: { clusters: OrderCluster[]; view: View; onZoom: (c: OrderCluster) => void }) {
  return (
    <g class="map-order-clusters">
      {props.clusters.map((c) => {
        const x = c.x * props.view.k;
        const y = c.y * props.view.k;
        if (!inView({ x, y }, props.view)) return null;
        const counts = tally<OrderStatus>(
          c.members.map((m) => m.feature.properties.status),
          LEGEND,
        );
        const top = counts[0]?.[0] ?? "received";
        const name = `${c.members.length} orders here: ${counts.map(([s, n]) => `${n} ${STATUS_LABEL[s].toLowerCase()}`).join(", ")}`;
        return (
          // biome-ignore lint/a11y/useSemanticElements: SVG has no button element; role, tabindex and keys make one.
          <g
            key={c.id}
            class="map-cluster map-order-cluster"
            transform={`translate(${x.toFixed(1)} ${y.toFixed(1)})`}
            data-count={c.members.length}
            data-cell={c.id}
            data-status={top}
            role="button"
            tabindex={0}
            aria-label={`${name}. Zoom in`}
            onClick={() => props.onZoom(c)}
            onKeyDown={onKey(() => props.onZoom(c))}
          >
            <title>{`${name}. Click to zoom in.`}</title>
            <circle
              class={`map-cluster-shape st-fill-${top}`}
              r={clusterRadius(c.members.length).toFixed(1)}
            />
            <text class="map-cluster-count" dy="0.35em">
              {c.members.length}
            </text>
          </g>
        );
      })}
    </g>
  );
}

/** The contractors' clusters: a diamond with the count; a click zooms into it. */
function ContractorClusters(props: {
  clusters: ContractorCluster[];
  view: View;
  onZoom: (c: ContractorCluster) => void;
}) {
  return (
    <g class="map-contractor-clusters">
      {props.clusters.map((c) => {
        const x = c.x * props.view.k;
        const y = c.y * props.view.k;
        if (!inView({ x, y }, props.view)) return null;
        const side = clusterRadius(c.members.length) * 1.55;
        const name = `${c.members.length} contractors based here`;
        return (
          // biome-ignore lint/a11y/useSemanticElements: SVG has no button element; role, tabindex and keys make one.
          <g
            key={c.id}
            class="map-cluster map-contractor-cluster"
            transform={`translate(${x.toFixed(1)} ${y.toFixed(1)})`}
            data-count={c.members.length}
            data-cell={c.id}
            role="button"
            tabindex={0}
            aria-label={`${name}. Zoom in`}
            onClick={() => props.onZoom(c)}
            onKeyDown={onKey(() => props.onZoom(c))}
          >
            <title>{`${name}. Click to zoom in.`}</title>
            <rect
              class="map-cluster-shape"
              x={(-side / 2).toFixed(1)}
              y={(-side / 2).toFixed(1)}
              width={side.toFixed(1)}
              height={side.toFixed(1)}
              rx="3"
              transform="rotate(45)"
            />
            <text class="map-cluster-count" dy="0.35em">
              {c.members.length}
            </text>
          </g>
        );
      })}
    </g>
  );
}

/** The orders' points, coloured by status (closed ones smaller): each opens its order. */
function OrderPoints(props: { orders: Array<Placed<OrderFeature>>; onOpenOrder: (orderId: string) => void }) {
  return (
    <g class="map-orders">
      {props.orders.map(({ feature: f, x, y }) => {
        const p = f.properties;
        const name = `${STATUS_LABEL[p.status]}: ${titleCase(p.trade)}, ${p.place}${p.who ? `, ${p.who}` : ""} (${p.order_id})`;
        return (
          // biome-ignore lint/a11y/useSemanticElements: SVG has no button element; role, tabindex and keys make one.
          <circle
            key={f.id}
            class={`map-order st-fill-${p.status} ${CLOSED.has(p.status) ? "map-closed" : ""}`}
            cx={x.toFixed(1)}
            cy={y.toFixed(1)}
            r={CLOSED.has(p.status) ? 3.6 : 5}
            data-order-id={p.order_id}
            data-status={p.status}
            role="button"
            tabindex={0}
            aria-label={`Open order ${name}`}
            onClick={() => props.onOpenOrder(p.order_id)}
            onKeyDown={onKey(() => props.onOpenOrder(p.order_id))}
          >
            <title>{name}</title>
          </circle>
        );
      })}
    </g>
  );
}

/** The contractors' bases: hovering or focusing one shows its service area, a click pins it. */
function ContractorPoints(props: {
  contractors: Array<Placed<ContractorFeature>>;
  pinned: string | null;
  onShowContractor: BaseMapProps["onShowContractor"];
}) {
  const show = props.onShowContractor;
  return (
    <g class="map-contractors">
      {props.contractors.map(({ feature: f, x, y }) => {
        const p = f.properties;
        const pinned = props.pinned === p.contractor_id;
        return (
          // biome-ignore lint/a11y/useSemanticElements: SVG has no button element; role, tabindex and keys make one.
          <rect
            key={f.id}
            class={`map-contractor map-standing-${p.standing} ${pinned ? "map-pinned" : ""}`}
            x={(x - 4.5).toFixed(1)}
            y={(y - 4.5).toFixed(1)}
            width="9"
            height="9"
            transform={`rotate(45 ${x.toFixed(1)} ${y.toFixed(1)})`}
            data-contractor-id={p.contractor_id}
            data-standing={p.standing}
            role="button"
            tabindex={0}
            aria-pressed={pinned}
            aria-label={`Contractor ${p.name}: show its base and service area`}
            onMouseEnter={() => show(p.contractor_id)}
            onMouseLeave={() => show(null)}
            onFocus={() => show(p.contractor_id)}
            onBlur={() => show(null)}
            onClick={() => show(p.contractor_id, true)}
            onKeyDown={onKey(() => show(p.contractor_id, true))}
          />
        );
      })}
    </g>
  );
}

/** The shown contractor's name, trades and service radius beside its base (at zoom k's pixels, before
 * the pan: the tip stays in the frame as drawn). */
function Tip({ x, y, view, feature: f }: { x: number; y: number; view: View; feature: ContractorFeature }) {
  const p = f.properties;
  const lines = [
    p.name,
    p.trades.map(titleCase).join(", "),
    `Base ${p.base_zip ?? "(no ZIP)"} · ${p.radius_miles ? `serves ${p.radius_miles} mi` : "serves its states"}`,
  ];
  const width = Math.max(...lines.map((l) => l.length)) * 6.6 + 16;
  const height = lines.length * 15 + 10;
  const sx = x + view.tx;
  const sy = y + view.ty;
  const left = (sx + 10 + width > WIDTH ? sx - 10 - width : sx + 10) - view.tx;
  const top = Math.min(Math.max(sy - height / 2, 2), HEIGHT - height - 2) - view.ty;
  return (
    // biome-ignore lint/a11y/noAriaHiddenOnFocusable: the tip is not focusable; the legend's line says the same.
    <g class="map-tip" aria-hidden="true">
      <rect x={left} y={top} width={width} height={height} rx="5" />
      {lines.map((l, i) => (
        <text key={i} x={left + 8} y={top + 18 + i * 15} class={i === 0 ? "map-tip-name" : ""}>
          {l}
        </text>
      ))}
    </g>
  );
}
