// The SVG base map: the states of us-atlas (TopoJSON, bundled, loaded the first time a map is shown),
// projected by d3-geo (Albers USA with Alaska, Hawaii and Puerto Rico inset), and the layers' points on
// top. No tiles, no network beyond this origin. A MapLibre map with a local style could replace this
// component: it takes the layers' features (layers.ts) and the same callbacks, nothing else.

import { geoCircle, geoPath } from "d3-geo";
import { useEffect, useState } from "preact/hooks";
import { feature, mesh } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import { STATUS_LABEL, titleCase } from "../format";
import { CLOSED, type ContractorFeature, MILES_PER_DEGREE, type OrderFeature } from "./layers";
import { albersUsaWithPuertoRico, HEIGHT, insetBoxes, WIDTH } from "./projection";

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

let shapes: Promise<Shapes> | null = null;

/** The states' paths, computed once: the projection never changes (the SVG scales, not the paths). */
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

interface Placed<F> {
  feature: F;
  x: number;
  y: number;
}

/** Pixels between points spread around one spot; points closer than a cell of this size share a spot. */
const SPACING = 6;

interface Spot {
  x: number;
  y: number;
  count: number;
}

/**
 * Projects the points; points on (nearly) the same spot (the orders of one ZIP share its centroid, a
 * contractor based there too) are spread in a small sunflower around the first one placed there, so
 * that each stays visible and clickable. `spots` holds the spots taken so far, across layers.
 */
function place<F extends { geometry: { coordinates: [number, number] } }>(
  features: F[],
  spots: Map<string, Spot>,
): Array<Placed<F>> {
  const out: Array<Placed<F>> = [];
  for (const f of features) {
    const xy = projection(f.geometry.coordinates);
    if (!xy) continue; // outside every part of the map (Guam, say)
    const key = `${Math.round(xy[0] / SPACING)},${Math.round(xy[1] / SPACING)}`;
    const spot = spots.get(key) ?? { x: xy[0], y: xy[1], count: 0 };
    spots.set(key, { ...spot, count: spot.count + 1 });
    const r = SPACING * Math.sqrt(spot.count);
    const a = spot.count * 2.39996; // the golden angle
    out.push({ feature: f, x: spot.x + r * Math.cos(a), y: spot.y + r * Math.sin(a) });
  }
  return out;
}

const onKey = (act: () => void) => (e: KeyboardEvent) => {
  if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
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
  // Contractors first: each keeps its base's exact spot, and the orders there go round it.
  const spots = new Map<string, Spot>();
  const contractors = place(props.contractors, spots);
  const orders = place(props.orders, spots);
  const shown = contractors.find((c) => c.feature.id === props.shownContractor);
  const radius = shown?.feature.properties.radius_miles ?? null;
  const area =
    shown && radius
      ? path(
          geoCircle()
            .center(shown.feature.geometry.coordinates)
            .radius(radius / MILES_PER_DEGREE)
            .precision(2)(),
        )
      : null;

  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG's points cannot sit in a fieldset; the group names them.
    <svg
      class="map-svg"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="group"
      aria-label={props.label}
      data-ready={base ? "true" : "false"}
    >
      <StateShapes base={base} failed={failed} />
      {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: the area is not focusable (no pointer events). */}
      {area && <path class="map-area" d={area} aria-hidden="true" />}
      <OrderPoints orders={orders} onOpenOrder={props.onOpenOrder} />
      <ContractorPoints
        contractors={contractors}
        pinned={props.pinnedContractor}
        onShowContractor={props.onShowContractor}
      />
      {shown && <Tip x={shown.x} y={shown.y} feature={shown.feature} />}
    </svg>
  );
}

/** The states, their borders and the insets' boxes; a line of text until they are loaded. */
function StateShapes({ base, failed }: { base: Shapes | null; failed: boolean }) {
  return (
    // biome-ignore lint/a11y/noAriaHiddenOnFocusable: the shapes are not focusable, only the points.
    <g class="map-base" aria-hidden="true">
      {base ? (
        <>
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
        </>
      ) : (
        <text class="map-loading" x={WIDTH / 2} y={HEIGHT / 2}>
          {failed ? "The state shapes could not be loaded." : "Loading the map…"}
        </text>
      )}
    </g>
  );
}

/** The orders' points, coloured by status (closed ones smaller): each opens its order. */
function OrderPoints(props: { orders: Array<Placed<OrderFeature>>; onOpenOrder: (orderId: string) => void }) {
  return (
    <g class="map-orders">
      {props.orders.map(({ feature: f, x, y }) => {
        const p = f.properties;
        const name = `${STATUS_LABEL[p.status]}: ${titleCase(p.trade)}, ${p.place} (${p.order_id})`;
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
            tabIndex={0}
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
            tabIndex={0}
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

/** The shown contractor's name, trades and service radius beside its base. */
function Tip({ x, y, feature: f }: { x: number; y: number; feature: ContractorFeature }) {
  const p = f.properties;
  const lines = [
    p.name,
    p.trades.map(titleCase).join(", "),
    `Base ${p.base_zip ?? "(no ZIP)"} · ${p.radius_miles ? `serves ${p.radius_miles} mi` : "serves its states"}`,
  ];
  const width = Math.max(...lines.map((l) => l.length)) * 6.6 + 16;
  const height = lines.length * 15 + 10;
  const left = x + 10 + width > WIDTH ? x - 10 - width : x + 10;
  const top = Math.min(Math.max(y - height / 2, 2), HEIGHT - height - 2);
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
