// The audit log's Merkle tree, as RFC 9162 (Certificate Transparency 2.0) section 2.1 defines it:
// leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right), the tree over n leaves
// split at the largest power of two smaller than n. Pure functions; storage lives elsewhere.
//
// The store keeps every *perfect* subtree's hash (a node at `level` and `index` covers leaves
// [index * 2^level, (index + 1) * 2^level)), written once when its last leaf arrives and never changed.
// Appending a leaf therefore hashes and writes O(log n) nodes at worst (one on average), and every root,
// inclusion proof and consistency proof is computed from O(log n) stored perfect subtrees.

import { createHash } from "node:crypto";

export type Hash = Buffer;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

export function leafHash(leaf: Uint8Array): Hash {
  return createHash("sha256").update(LEAF_PREFIX).update(leaf).digest();
}

function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest();
}

/** SHA-256 of the empty string: the root of the empty tree. */
export const EMPTY_ROOT: Hash = createHash("sha256").digest();

export interface NodeRef {
  level: number;
  index: number;
}

export interface NewNode extends NodeRef {
  hash: Hash;
}

/** Reads a stored perfect subtree (level 0: a leaf hash). */
export type NodeSource = (level: number, index: number) => Hash;

/** The largest power of two strictly smaller than n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The perfect subtrees that make up a tree of `size` leaves, left to right (its "compact range"): one
 * per set bit of `size`, largest first.
 */
export function compactRange(size: number): NodeRef[] {
  const out: NodeRef[] = [];
  let start = 0;
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level;
    if (size - start >= width) {
      out.push({ level, index: start / width });
      start += width;
    }
  }
  return out;
}

/** The root of a tree from its compact range hashes (left to right). */
function rootFromRange(range: Hash[]): Hash {
  if (range.length === 0) return EMPTY_ROOT;
  let acc = range[range.length - 1] as Hash;
  for (let i = range.length - 2; i >= 0; i--) acc = nodeHash(range[i] as Hash, acc);
  return acc;
}

/**
 * Appends leaves to a tree of `size` leaves whose compact range hashes are `range`. Returns every new
 * perfect subtree (level 0 are the leaves themselves), the new compact range and the new root.
 */
export function appendLeaves(
  size: number,
  range: Hash[],
  leaves: Hash[],
): { nodes: NewNode[]; range: Hash[]; root: Hash; size: number } {
  const refs = compactRange(size);
  if (refs.length !== range.length) throw new Error("compact range does not match the tree size");
  // A stack of (level, index, hash), the compact range as it grows.
  const stack: NewNode[] = refs.map((r, i) => ({ ...r, hash: range[i] as Hash }));
  const nodes: NewNode[] = [];
  let n = size;
  for (const leaf of leaves) {
    let node: NewNode = { level: 0, index: n, hash: leaf };
    nodes.push(node);
    // While the new node is a right child, merge it with its left sibling (the top of the stack).
    while (node.index % 2 === 1) {
      const left = stack.pop();
      if (!left || left.level !== node.level) throw new Error("compact range is inconsistent");
      node = { level: node.level + 1, index: (node.index - 1) / 2, hash: nodeHash(left.hash, node.hash) };
      nodes.push(node);
    }
    stack.push(node);
    n++;
  }
  const newRange = stack.map((s) => s.hash);
  return { nodes, range: newRange, root: rootFromRange(newRange), size: n };
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && Number.isInteger(Math.log2(n));
}

function isPerfect(start: number, end: number): { level: number; index: number } | null {
  const width = end - start;
  if (!isPowerOfTwo(width) || start % width !== 0) return null;
  return { level: Math.log2(width), index: start / width };
}

/** A run of leaves [start, end) of the tree: a proof's element is the hash of one. */
export interface Span {
  start: number;
  end: number;
}

/**
 * The perfect subtrees whose hashes make up MTH(D[start:end]), in the order the RFC's split visits them.
 * A span of a proof is either perfect (one node) or ends at the tree's size (its right edge).
 */
export function spanNodes(span: Span, out: NodeRef[] = []): NodeRef[] {
  const perfect = isPerfect(span.start, span.end);
  if (perfect) out.push(perfect);
  else {
    const k = splitPoint(span.end - span.start);
    spanNodes({ start: span.start, end: span.start + k }, out);
    spanNodes({ start: span.start + k, end: span.end }, out);
  }
  return out;
}

/** MTH(D[start:end]) from stored perfect subtrees. */
export function spanHash(get: NodeSource, span: Span): Hash {
  const perfect = isPerfect(span.start, span.end);
  if (perfect) return get(perfect.level, perfect.index);
  const k = splitPoint(span.end - span.start);
  return nodeHash(
    spanHash(get, { start: span.start, end: span.start + k }),
    spanHash(get, { start: span.start + k, end: span.end }),
  );
}

/** The spans of RFC 9162 2.1.3.1's inclusion proof PATH(m, D[0:n]), leaf to root. */
export function inclusionSpans(m: number, n: number): Span[] {
  if (m < 0 || m >= n) throw new RangeError(`leaf ${m} is not in a tree of ${n}`);
  const out: Span[] = [];
  const path = (start: number, end: number): void => {
    if (end - start === 1) return;
    const k = splitPoint(end - start);
    if (m < start + k) {
      path(start, start + k);
      out.push({ start: start + k, end });
    } else {
      path(start + k, end);
      out.push({ start, end: start + k });
    }
  };
  path(0, n);
  return out;
}

/** The spans of RFC 9162 2.1.4.1's consistency proof PROOF(m, D[0:n]). */
export function consistencySpans(m: number, n: number): Span[] {
  if (m < 1 || m > n) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  const out: Span[] = [];
  const sub = (m: number, start: number, end: number, b: boolean): void => {
    const size = end - start;
    if (m === size) {
      if (!b) out.push({ start, end });
      return;
    }
    const k = splitPoint(size);
    if (m <= k) {
      sub(m, start, start + k, b);
      out.push({ start: start + k, end });
    } else {
      sub(m - k, start + k, end, false);
      out.push({ start, end: start + k });
    }
  };
  if (m < n) sub(m, 0, n, true);
  return out;
}

/** RFC 9162 2.1.3.1: the inclusion proof PATH(m, D[0:n]) of leaf m in a tree of n leaves. */
export function inclusionProof(get: NodeSource, m: number, n: number): Hash[] {
  return inclusionSpans(m, n).map((span) => spanHash(get, span));
}

/** RFC 9162 2.1.4.1: the consistency proof PROOF(m, D[0:n]) between tree sizes m and n. */
export function consistencyProof(get: NodeSource, m: number, n: number): Hash[] {
  return consistencySpans(m, n).map((span) => spanHash(get, span));
}

export function nodeKey(level: number, index: number): string {
  return `${level}/${index}`;
}

/** RFC 9162 2.1.3.2: verifies an inclusion proof; returns whether it leads to `root`. */
export function verifyInclusion(
  leaf: Hash,
  leafIndex: number,
  treeSize: number,
  proof: Hash[],
  root: Hash,
): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 2.1.4.2: verifies a consistency proof between two roots. */
export function verifyConsistency(
  first: number,
  second: number,
  proof: Hash[],
  firstRoot: Hash,
  secondRoot: Hash,
): boolean {
  if (first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (proof.length === 0) return false;
  // If first is an exact power of two, prepend first_hash to the proof.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

// Tiles, as Trillian's stored subtrees and C2SP tlog-tiles keep the tree's lowest levels: one row per
// complete subtree of TILE_WIDTH leaves holding its leaf hashes and its inner nodes below its root
// (levels 0 to TILE_HEIGHT - 1, level by level, left to right), so the lowest TILE_HEIGHT levels of a proof
// are one read. The tile's root (level TILE_HEIGHT) is an ordinary stored node.

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;
const HASH_BYTES = 32;

/** Where level `level`'s first node sits in a tile, in hashes: 256 leaves, then 128 nodes, ... */
function tileOffset(level: number): number {
  return 2 * TILE_WIDTH - 2 ** (TILE_HEIGHT + 1 - level);
}

/** The tile holding a stored node, or null for a node at or above a tile's root. */
export function tileOf(ref: NodeRef): number | null {
  return ref.level < TILE_HEIGHT ? Math.floor(ref.index / 2 ** (TILE_HEIGHT - ref.level)) : null;
}

/** A tile's stored bytes from its TILE_WIDTH leaf hashes: every level below its root, concatenated. */
export function buildTile(leaves: Hash[]): Buffer {
  if (leaves.length !== TILE_WIDTH)
    throw new Error(`a tile holds ${TILE_WIDTH} leaves, not ${leaves.length}`);
  const levels: Hash[][] = [leaves];
  for (let level = 1; level < TILE_HEIGHT; level++) {
    const below = levels[level - 1] as Hash[];
    const nodes: Hash[] = [];
    for (let i = 0; i < below.length; i += 2) nodes.push(nodeHash(below[i] as Hash, below[i + 1] as Hash));
    levels.push(nodes);
  }
  return Buffer.concat(levels.flat());
}

/** A node of tile `tile` (see tileOf) from its stored bytes. */
export function tileNode(bytes: Buffer, tile: number, ref: NodeRef): Hash {
  const at = tileOffset(ref.level) + ref.index - tile * 2 ** (TILE_HEIGHT - ref.level);
  return Buffer.from(bytes.subarray(at * HASH_BYTES, (at + 1) * HASH_BYTES));
}
