// API key format: `fsd_live_<token>` / `fsd_test_<token>`. The token is 30 random base62 characters followed
// by a 6-character base62 CRC32 of everything before it, so a mistyped key is rejected before any lookup.
// Only the SHA-256 of a key is stored.

import { hash, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";
import { base62, randomBase62 } from "../base62.js";

const KEY_PREFIX = "fsd";
const KEY_MODES = ["live", "test"] as const;
export type KeyMode = (typeof KEY_MODES)[number];

const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
const KEY_PATTERN = /^fsd_(live|test)_([0-9A-Za-z]{36})$/;

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

export function generateApiKey(mode: KeyMode): string {
  const body = `${KEY_PREFIX}_${mode}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksum(body);
}

export type ParsedKey = { ok: true; mode: KeyMode } | { ok: false; reason: "malformed" | "checksum" };

/** Checks a key's shape and checksum without any lookup. */
export function parseApiKey(key: string): ParsedKey {
  const m = KEY_PATTERN.exec(key);
  if (!m) return { ok: false, reason: "malformed" };
  const body = key.slice(0, key.length - CHECKSUM_LENGTH);
  if (checksum(body) !== key.slice(-CHECKSUM_LENGTH)) return { ok: false, reason: "checksum" };
  return { ok: true, mode: m[1] as KeyMode };
}

export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const ba = Buffer.from(a, "hex");
  const bb = Buffer.from(b, "hex");
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** A short, non-secret hint to recognise a key in listings: its mode and last 4 characters. */
export function keyHint(key: string): string {
  return `${key.slice(0, key.indexOf("_", 4) + 1)}...${key.slice(-4)}`;
}
