// The Merkle tree module against the RFC 9162 definitions: roots, proofs and verification, with the
// independent verifier in test/helpers/rfc9162.ts.

import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  appendLeaves,
  buildTile,
  compactRange,
  consistencyProof,
  consistencySpans,
  EMPTY_ROOT,
  type Hash,
  inclusionProof,
  inclusionSpans,
  leafHash,
  type NodeSource,
  nodeKey,
  spanNodes,
  TILE_HEIGHT,
  TILE_WIDTH,
  tileNode,
  tileOf,
  verifyConsistency,
  verifyInclusion,
} from "../../src/audit/merkle.js";
import {
  rfcLeafHash,
  rfcMth,
  rfcMthOfHashes,
  rfcVerifyConsistency,
  rfcVerifyInclusion,
} from "../helpers/rfc9162.js";

/** Builds a tree of `n` random leaves by appending in random batches; returns its stored nodes. */
function build(n: number, batches = 3) {
  const data = Array.from({ length: n }, () => randomBytes(8));
  const nodes = new Map<string, Hash>();
  let size = 0;
  let range: Hash[] = [];
  const roots = new Map<number, Hash>([[0, EMPTY_ROOT]]);
  while (size < n) {
    const take = Math.min(n - size, 1 + Math.floor(Math.random() * Math.max(1, n / batches)));
    const grown = appendLeaves(
      size,
      range,
      data.slice(size, size + take).map((d) => leafHash(d)),
    );
    for (const node of grown.nodes) nodes.set(nodeKey(node.level, node.index), node.hash);
    size = grown.size;
    range = grown.range;
    roots.set(size, grown.root);
  }
  const get: NodeSource = (level, index) => {
    const h = nodes.get(nodeKey(level, index));
    if (!h) throw new Error(`missing ${level}/${index}`);
    return h;
  };
  return { data, get, roots, root: roots.get(n) as Hash, nodes };
}

describe("Merkle tree (RFC 9162)", () => {
  it("computes MTH for every size from 0 to 130, however the leaves were appended", () => {
    for (let n = 0; n <= 130; n++) {
      const { data, root } = build(n, 1 + (n % 5));
      expect(root.equals(rfcMth(data)), `size ${n}`).toBe(true);
    }
  });

  it("writes O(log n) nodes per append and about one per leaf overall", () => {
    const { nodes } = build(1024, 1);
    expect(nodes.size).toBe(2047); // every perfect subtree of 1024 leaves, leaves included
    for (const size of [1, 2, 3, 1000, 1023]) expect(compactRange(size).length).toBeLessThanOrEqual(11);
    const one = appendLeaves(1023, compactRangeHashes(1023), [leafHash(Buffer.from("x"))]);
    expect(one.nodes.length).toBe(11); // the leaf and ten merges: log2(1024) + 1
  });

  it("gives inclusion proofs that the independent verifier and ours accept, and rejects altered ones", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), (n, pick) => {
        const { data, get, root } = build(n);
        const m = pick % n;
        const proof = inclusionProof(get, m, n);
        const leaf = rfcLeafHash(data[m] as Buffer);
        expect(rfcVerifyInclusion(leaf, m, n, proof, root)).toBe(true);
        expect(verifyInclusion(leaf, m, n, proof, root)).toBe(true);
        const other = rfcLeafHash(randomBytes(8));
        expect(rfcVerifyInclusion(other, m, n, proof, root)).toBe(false);
        expect(verifyInclusion(other, m, n, proof, root)).toBe(false);
        if (proof.length > 0) {
          const bad = proof.map((h, i) => (i === 0 ? randomBytes(32) : h));
          expect(verifyInclusion(leaf, m, n, bad, root)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("gives consistency proofs between any two sizes that both verifiers accept", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), (n, pick) => {
        const { data, get, root } = build(n);
        const m = 1 + (pick % n);
        const firstRoot = rfcMth(data.slice(0, m));
        const proof = consistencyProof(get, m, n);
        expect(rfcVerifyConsistency(m, n, firstRoot, root, proof)).toBe(true);
        expect(verifyConsistency(m, n, proof, firstRoot, root)).toBe(true);
        if (m < n) {
          const forged = rfcMth([...data.slice(0, m - 1), randomBytes(8)]);
          expect(rfcVerifyConsistency(m, n, forged, root, proof)).toBe(false);
          expect(verifyConsistency(m, n, proof, forged, root)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("holds in a tile every node below its root as the RFC hashes it from the tile's leaves", () => {
    const tile = 5;
    const leaves = Array.from({ length: TILE_WIDTH }, () => randomBytes(32));
    const bytes = buildTile(leaves);
    expect(bytes.length).toBe((2 * TILE_WIDTH - 2) * 32);
    for (let level = 0; level < TILE_HEIGHT; level++) {
      const width = 2 ** level;
      for (let i = 0; i < TILE_WIDTH / width; i++) {
        const ref = { level, index: tile * (TILE_WIDTH / width) + i };
        expect(tileOf(ref)).toBe(tile);
        expect(tileNode(bytes, tile, ref).toString("hex"), `${level}/${ref.index}`).toBe(
          rfcMthOfHashes(leaves.slice(i * width, (i + 1) * width)).toString("hex"),
        );
      }
    }
    expect(tileOf({ level: TILE_HEIGHT, index: tile })).toBeNull();
    expect(tileOf({ level: 0, index: 2 ** 40 + 255 })).toBe(2 ** 32);
    expect(() => buildTile(leaves.slice(1))).toThrow();
  });

  it("plans a proof over at most 2 log2(n) stored nodes, whatever the tree's size", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.nat(), fc.nat(), (n, a, b) => {
        const bound = 2 * Math.ceil(Math.log2(n + 1)) + 1;
        const nodes = (spans: Array<{ start: number; end: number }>) =>
          new Set(spans.flatMap((s) => spanNodes(s)).map((r) => nodeKey(r.level, r.index))).size;
        expect(nodes(inclusionSpans(a % n, n))).toBeLessThanOrEqual(bound);
        expect(nodes(consistencySpans(1 + (b % n), n))).toBeLessThanOrEqual(bound);
      }),
      { numRuns: 500 },
    );
  });
});

/** The compact range of a tree of `size` leaves built in one batch. */
function compactRangeHashes(size: number): Hash[] {
  const { get } = build(size, 1);
  return compactRange(size).map((r) => get(r.level, r.index));
}
