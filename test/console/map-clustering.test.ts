// The console map's pure parts (console/src/map/): the grid clustering of dense points at a zoom, the
// tally that colours an order cluster by its most urgent status, and the zoom-and-pan transform.

import { describe, expect, it } from "vitest";
import { boundsOf, gridCluster, tally } from "../../console/src/map/clustering.js";
import { clampView, type Frame, panBy, WHOLE, zoomAbout, zoomToBox } from "../../console/src/map/zoom.js";

const GRID = { cell: 48, minPoints: 3 };
const at = (id: string, x: number, y: number) => ({ id, x, y });

describe("gridCluster", () => {
  // Three points within one 48-pixel cell, two in another, one alone.
  const pile = [at("a", 10, 10), at("b", 20, 30), at("c", 40, 44)];
  const pair = [at("d", 200, 10), at("e", 210, 12)];
  const alone = at("f", 500, 500);

  it("turns a cell of minPoints or more into one cluster at its members' centroid, with their extent", () => {
    const { clusters, singles } = gridCluster([...pile, ...pair, alone], 1, GRID);
    expect(clusters).toHaveLength(1);
    const [c] = clusters;
    expect(c?.members.map((m) => m.id)).toEqual(["a", "b", "c"]);
    expect(c?.x).toBeCloseTo(70 / 3);
    expect(c?.y).toBeCloseTo(28);
    expect(c?.bounds).toEqual({ x0: 10, y0: 10, x1: 40, y1: 44 });
    expect(c?.id).toBe("0:0");
    // Fewer than minPoints in a cell: drawn one by one, in the input's order.
    expect(singles.map((p) => p.id)).toEqual(["d", "e", "f"]);
  });

  it("cuts finer cells as the zoom deepens, until the pile falls apart", () => {
    // At zoom 2 a cell is 24 units: a (10,10) and b (20,30) are in different cells, so are c (40,44).
    const { clusters, singles } = gridCluster(pile, 2, GRID);
    expect(clusters).toEqual([]);
    expect(singles.map((p) => p.id)).toEqual(["a", "b", "c"]);
  });

  it("keeps points on one spot together at any zoom", () => {
    const spot = Array.from({ length: 12 }, (_, i) => at(`s${i}`, 333.3, 222.2));
    for (const k of [1, 4, 32]) {
      const { clusters, singles } = gridCluster(spot, k, GRID);
      expect(clusters).toHaveLength(1);
      expect(clusters[0]?.members).toHaveLength(12);
      expect(clusters[0]?.bounds).toEqual({ x0: 333.3, y0: 222.2, x1: 333.3, y1: 222.2 });
      expect(singles).toEqual([]);
    }
  });

  it("counts every point once: in a cluster or single, never both, never lost", () => {
    const many = Array.from({ length: 500 }, (_, i) => at(`p${i}`, (i * 37) % 975, (i * 91) % 610));
    const { clusters, singles } = gridCluster(many, 1.7, { cell: 48, minPoints: 2 });
    const ids = [...clusters.flatMap((c) => c.members), ...singles].map((p) => p.id);
    expect(ids).toHaveLength(500);
    expect(new Set(ids).size).toBe(500);
    for (const c of clusters) expect(c.members.length).toBeGreaterThanOrEqual(2);
  });
});

describe("tally", () => {
  const urgency = ["needs_dispatcher", "offered", "accepted", "cancelled"];

  it("counts each value, most urgent first: the first is a cluster's colour", () => {
    const statuses = ["accepted", "accepted", "cancelled", "needs_dispatcher", "accepted"];
    expect(tally(statuses, urgency)).toEqual([
      ["needs_dispatcher", 1],
      ["accepted", 3],
      ["cancelled", 1],
    ]);
  });

  it("puts a value the order does not know last", () => {
    expect(tally(["mystery", "offered"], urgency)).toEqual([
      ["offered", 1],
      ["mystery", 1],
    ]);
  });
});

describe("boundsOf", () => {
  it("is the smallest box around the points", () => {
    expect(boundsOf([at("a", 5, 9), at("b", -2, 30), at("c", 7, 1)])).toEqual({
      x0: -2,
      y0: 1,
      x1: 7,
      y1: 30,
    });
  });
});

describe("zoom", () => {
  const frame: Frame = { width: 1000, height: 600, maxK: 32 };

  it("zooms about a point, which stays where it is drawn", () => {
    const v = zoomAbout(WHOLE, 4, 250, 150, frame);
    expect(v.k).toBe(4);
    // The frame's point (250, 150) at zoom 1 is still drawn at (250, 150).
    expect(250 * v.k + v.tx).toBeCloseTo(250);
    expect(150 * v.k + v.ty).toBeCloseTo(150);
  });

  it("keeps the zoom from 1 to maxK and never pans past the frame's edges", () => {
    expect(zoomAbout(WHOLE, 0.5, 500, 300, frame)).toEqual(WHOLE);
    expect(zoomAbout(WHOLE, 1000, 500, 300, frame).k).toBe(32);
    expect(panBy(WHOLE, 80, -80, frame)).toEqual(WHOLE); // the whole frame shown: nothing to pan to
    const deep = zoomAbout(WHOLE, 2, 500, 300, frame); // shows the middle half
    expect(panBy(deep, 10_000, 10_000, frame)).toEqual({ k: 2, tx: 0, ty: 0 });
    expect(panBy(deep, -10_000, -10_000, frame)).toEqual({ k: 2, tx: -1000, ty: -600 });
    expect(clampView({ k: 0.2, tx: 50, ty: 50 }, frame)).toEqual(WHOLE);
  });

  it("pans by what it is told, within the edges", () => {
    const deep = zoomAbout(WHOLE, 2, 500, 300, frame);
    const moved = panBy(deep, 80, -40, frame);
    expect(moved.tx - deep.tx).toBe(80);
    expect(moved.ty - deep.ty).toBe(-40);
  });

  it("fits a box, centred, at least the zoom asked for, at most maxK", () => {
    const v = zoomToBox({ x0: 100, y0: 100, x1: 200, y1: 150 }, 2, 40, frame);
    // (1000 - 80) / 100 = 9.2 wide, (600 - 80) / 50 = 10.4 high: 9.2 fits both.
    expect(v.k).toBeCloseTo(9.2);
    expect(150 * v.k + v.tx).toBeCloseTo(500);
    expect(125 * v.k + v.ty).toBeCloseTo(300);
    // A big box still zooms in as far as asked; a box of no size (one spot) zooms in all the way.
    expect(zoomToBox({ x0: 0, y0: 0, x1: 900, y1: 500 }, 3, 40, frame).k).toBe(3);
    expect(zoomToBox({ x0: 400, y0: 300, x1: 400, y1: 300 }, 2, 40, frame).k).toBe(32);
  });
});
