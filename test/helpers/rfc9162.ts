// An independent RFC 9162 verifier, written for the tests from the RFC's text (sections 2.1.1, 2.1.3.2
// and 2.1.4.2) and sharing no code with src/audit. The tests check the service's proofs with this.

import { createHash } from "node:crypto";

const sha256 = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

export function rfcLeafHash(data: Buffer): Buffer {
  return sha256(LEAF, data);
}

/** MTH(D[n]) straight from the definition in 2.1.1, over leaf *data*. */
export function rfcMth(leaves: Buffer[]): Buffer {
  const n = leaves.length;
  if (n === 0) return sha256();
  if (n === 1) return sha256(LEAF, leaves[0] as Buffer);
  let k = 1;
  while (k << 1 < n) k <<= 1;
  return sha256(NODE, rfcMth(leaves.slice(0, k)), rfcMth(leaves.slice(k)));
}

/** MTH over leaves given by their leaf hashes (2.1.1, with the leaf hashing already done). */
export function rfcMthOfHashes(hashes: Buffer[]): Buffer {
  const n = hashes.length;
  if (n === 0) return sha256();
  if (n === 1) return hashes[0] as Buffer;
  let k = 1;
  while (k << 1 < n) k <<= 1;
  return sha256(NODE, rfcMthOfHashes(hashes.slice(0, k)), rfcMthOfHashes(hashes.slice(k)));
}

/** 2.1.3.1: PATH(m, D[n]) straight from the definition, over leaf hashes. */
export function rfcPath(m: number, hashes: Buffer[]): Buffer[] {
  const n = hashes.length;
  if (n === 1) return [];
  let k = 1;
  while (k << 1 < n) k <<= 1;
  return m < k
    ? [...rfcPath(m, hashes.slice(0, k)), rfcMthOfHashes(hashes.slice(k))]
    : [...rfcPath(m - k, hashes.slice(k)), rfcMthOfHashes(hashes.slice(0, k))];
}

/** 2.1.4.1: PROOF(m, D[n]) straight from the definition, over leaf hashes. */
export function rfcProof(m: number, hashes: Buffer[]): Buffer[] {
  const sub = (m: number, d: Buffer[], b: boolean): Buffer[] => {
    const n = d.length;
    if (m === n) return b ? [] : [rfcMthOfHashes(d)];
    let k = 1;
    while (k << 1 < n) k <<= 1;
    return m <= k
      ? [...sub(m, d.slice(0, k), b), rfcMthOfHashes(d.slice(k))]
      : [...sub(m - k, d.slice(k), false), rfcMthOfHashes(d.slice(0, k))];
  };
  return m === hashes.length ? [] : sub(m, hashes, true);
}

/** 2.1.3.2: verifying an inclusion proof. */
export function rfcVerifyInclusion(
  hash: Buffer,
  leafIndex: number,
  treeSize: number,
  path: Buffer[],
  rootHash: Buffer,
): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = hash;
  for (const p of path) {
    if (sn === 0) return false;
    if ((fn & 1) === 1 || fn === sn) {
      r = sha256(NODE, p, r);
      if ((fn & 1) === 0) {
        while ((fn & 1) === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = sha256(NODE, r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(rootHash);
}

/** 2.1.4.2: verifying consistency between two tree heads. */
export function rfcVerifyConsistency(
  first: number,
  second: number,
  firstHash: Buffer,
  secondHash: Buffer,
  consistencyPath: Buffer[],
): boolean {
  if (first === second) return consistencyPath.length === 0 && firstHash.equals(secondHash);
  if (consistencyPath.length === 0) return false;
  const path = (first & (first - 1)) === 0 ? [firstHash, ...consistencyPath] : [...consistencyPath];
  let fn = first - 1;
  let sn = second - 1;
  while ((fn & 1) === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0] as Buffer;
  let sr = path[0] as Buffer;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if ((fn & 1) === 1 || fn === sn) {
      fr = sha256(NODE, c, fr);
      sr = sha256(NODE, c, sr);
      if ((fn & 1) === 0) {
        while ((fn & 1) === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = sha256(NODE, sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return fr.equals(firstHash) && sr.equals(secondHash) && sn === 0;
}
