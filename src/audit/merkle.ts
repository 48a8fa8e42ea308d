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

/** MTH(D[start:end]) from stored perfect subtrees. */
function subtreeHash(get: NodeSource, start: number, end: number): Hash {
  const perfect = isPerfect(start, end);
  if (perfect) return get(perfect.level, perfect.index);
  const k = splitPoint(end - start);
  return nodeHash(subtreeHash(get, start, start + k), subtreeHash(get, start + k, end));
}

/** RFC 9162 2.1.3.1: the inclusion proof PATH(m, D[0:n]) of leaf m in a tree of n leaves. */
export function inclusionProof(get: NodeSource, m: number, n: number): Hash[] {
  if (m < 0 || m >= n) throw new RangeError(`leaf ${m} is not in a tree of ${n}`);
  const path = (m: number, start: number, end: number): Hash[] => {
    if (end - start === 1) return [];
    const k = splitPoint(end - start);
    return m < start + k
      ? [...path(m, start, start + k), subtreeHash(get, start + k, end)]
      : [...path(m, start + k, end), subtreeHash(get, start, start + k)];
  };
  return path(m, 0, n);
}

/** RFC 9162 2.1.4.1: the consistency proof PROOF(m, D[0:n]) between tree sizes m and n. */
export function consistencyProof(get: NodeSource, m: number, n: number): Hash[] {
  if (m < 1 || m > n) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  if (m === n) return [];
  const sub = (m: number, start: number, end: number, b: boolean): Hash[] => {
    const size = end - start;
    if (m === size) return b ? [] : [subtreeHash(get, start, end)];
    const k = splitPoint(size);
    return m <= k
      ? [...sub(m, start, start + k, b), subtreeHash(get, start + k, end)]
      : [...sub(m - k, start + k, end, false), subtreeHash(get, start, start + k)];
  };
  return sub(m, 0, n, true);
}

/**
 * Runs `compute` twice: first with a recording source to learn which stored nodes it reads, then, once
 * `fetch` has loaded them in one go, for real. Lets a caller read a proof's nodes in one query.
 */
export async function withNodes<T>(
  compute: (get: NodeSource) => T,
  fetch: (refs: NodeRef[]) => Promise<Map<string, Hash>>,
): Promise<T> {
  const wanted = new Map<string, NodeRef>();
  const dummy = Buffer.alloc(32);
  compute((level, index) => {
    wanted.set(nodeKey(level, index), { level, index });
    return dummy;
  });
  const found = await fetch([...wanted.values()]);
  return compute((level, index) => {
    const hash = found.get(nodeKey(level, index));
    if (!hash) throw new Error(`audit tree node ${level}/${index} is missing from the store`);
    return hash;
  });
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
