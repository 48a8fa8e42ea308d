// The map's projection: d3-geo's Albers USA (the lower 48 states, Alaska and Hawaii as insets) with one
// more inset, for Puerto Rico and the US Virgin Islands, east of Florida, where the lower 48's frame is
// open sea. d3-geo's own geoAlbersUsa leaves Puerto Rico out; this is the same composite, built the same
// way (a conic equal-area projection per inset, each clipped to its box, multiplexed into one stream).

import { type GeoProjection, type GeoStream, geoAlbers, geoConicEqualArea } from "d3-geo";

/** The frame the map is drawn in (us-atlas's pre-projected files use the same one). */
export const WIDTH = 975;
export const HEIGHT = 610;
const SCALE = 1300;
const CENTER: [number, number] = [WIDTH / 2, HEIGHT / 2];
const EPSILON = 1e-6;

/** Each inset's box, in units of the scale, from the frame's centre: [[x0, y0], [x1, y1]]. */
const INSETS = {
  alaska: [
    [-0.425, 0.12],
    [-0.214, 0.234],
  ],
  hawaii: [
    [-0.214, 0.166],
    [-0.115, 0.234],
  ],
  puertoRico: [
    [0.28, 0.17],
    [0.37, 0.234],
  ],
} as const;

/** The insets' boxes in the frame's pixels, to draw their outlines. */
export function insetBoxes(): Array<{ id: string; x: number; y: number; width: number; height: number }> {
  return Object.entries(INSETS).map(([id, [[x0, y0], [x1, y1]]]) => ({
    id,
    x: CENTER[0] + x0 * SCALE,
    y: CENTER[1] + y0 * SCALE,
    width: (x1 - x0) * SCALE,
    height: (y1 - y0) * SCALE,
  }));
}

function multiplex(streams: GeoStream[]): GeoStream {
  return {
    point: (x, y) => {
      for (const s of streams) s.point(x, y);
    },
    sphere: () => {
      for (const s of streams) s.sphere?.();
    },
    lineStart: () => {
      for (const s of streams) s.lineStart();
    },
    lineEnd: () => {
      for (const s of streams) s.lineEnd();
    },
    polygonStart: () => {
      for (const s of streams) s.polygonStart();
    },
    polygonEnd: () => {
      for (const s of streams) s.polygonEnd();
    },
  };
}

type Box = readonly [readonly [number, number], readonly [number, number]];

/** Albers USA with Puerto Rico, fixed to the WIDTH x HEIGHT frame. Points outside every part: null. */
export function albersUsaWithPuertoRico(): GeoProjection {
  const [x, y] = CENTER;
  const k = SCALE;
  const clip = (b: Box): [[number, number], [number, number]] => [
    [x + b[0][0] * k + EPSILON, y + b[0][1] * k + EPSILON],
    [x + b[1][0] * k - EPSILON, y + b[1][1] * k - EPSILON],
  ];
  const lower48 = geoAlbers()
    .scale(k)
    .translate([x, y])
    .clipExtent([
      [x - 0.455 * k, y - 0.238 * k],
      [x + 0.455 * k, y + 0.238 * k],
    ]);
  // As d3-geo's geoAlbersUsa: EPSG:3338 for Alaska (at 0.35 of the scale), ESRI:102007 for Hawaii.
  const alaska = geoConicEqualArea()
    .rotate([154, 0])
    .center([-2, 58.5])
    .parallels([55, 65])
    .scale(k * 0.35)
    .translate([x - 0.307 * k, y + 0.201 * k])
    .clipExtent(clip(INSETS.alaska));
  const hawaii = geoConicEqualArea()
    .rotate([157, 0])
    .center([-3, 19.9])
    .parallels([8, 18])
    .scale(k)
    .translate([x - 0.205 * k, y + 0.212 * k])
    .clipExtent(clip(INSETS.hawaii));
  // Puerto Rico and the Virgin Islands, at the lower 48's scale.
  const puertoRico = geoConicEqualArea()
    .rotate([66, 0])
    .center([0.6, 18.1])
    .parallels([8, 18])
    .scale(k)
    .translate([x + 0.325 * k, y + 0.205 * k])
    .clipExtent(clip(INSETS.puertoRico));
  const parts = [lower48, alaska, hawaii, puertoRico];

  let found: [number, number] | null = null;
  const sink: GeoStream = {
    point: (px, py) => {
      found = [px, py];
    },
    lineStart() {},
    lineEnd() {},
    polygonStart() {},
    polygonEnd() {},
  };
  const pointStreams = parts.map((p) => p.stream(sink));
  let cache: GeoStream | null = null;
  let cacheFor: GeoStream | null = null;

  const project = ((coordinates: [number, number]) => {
    for (const s of pointStreams) {
      found = null;
      s.point(coordinates[0], coordinates[1]);
      if (found) return found;
    }
    return null;
  }) as unknown as GeoProjection;
  project.stream = (stream: GeoStream) => {
    if (cache && cacheFor === stream) return cache;
    cacheFor = stream;
    cache = multiplex(parts.map((p) => p.stream(stream)));
    return cache;
  };
  return project;
}
