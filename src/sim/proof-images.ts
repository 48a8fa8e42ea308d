// Images the sandbox's simulated contractors add as proof of their work: a "photo" of the job (a labelled
// picture, plainly not a camera's) and the site contact's signature drawn as a pad would (a PNG of strokes
// on white). Drawn by sharp from SVG, the same from the same order, so a sandbox job's proof looks alike
// on every run.

import sharp from "sharp";
import { rngOf, seedOf } from "../domain/random.js";

const escapeXml = (text: string) =>
  text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c,
  );

/** A JPEG (800x600 by default; the CLI simulator's are smaller, to keep a long run's cost down): a coloured
 * field with the job's trade and id, marked as generated. */
export async function sandboxPhoto(
  orderId: string,
  trade: string,
  size: { width: number; height: number } = { width: 800, height: 600 },
): Promise<Buffer> {
  const rng = rngOf(seedOf(orderId, "photo"));
  const hue = Math.floor(rng() * 360);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" viewBox="0 0 800 600">
  <rect width="800" height="600" fill="hsl(${hue},45%,42%)"/>
  <rect x="40" y="40" width="720" height="520" rx="18" fill="none" stroke="white" stroke-width="4" stroke-dasharray="18 10"/>
  <text x="400" y="270" font-family="sans-serif" font-size="54" fill="white" text-anchor="middle">${escapeXml(trade)} job done</text>
  <text x="400" y="340" font-family="monospace" font-size="26" fill="white" text-anchor="middle">${escapeXml(orderId)}</text>
  <text x="400" y="520" font-family="sans-serif" font-size="22" fill="white" text-anchor="middle">sandbox photo (generated)</text>
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
}

/** A signature pad's PNG (600x200): a few cursive-like strokes, drawn from the order's id. */
export async function sandboxSignature(orderId: string): Promise<Buffer> {
  const rng = rngOf(seedOf(orderId, "signature"));
  let x = 40;
  let path = `M ${x} ${120 + rng() * 30}`;
  while (x < 520) {
    const step = 25 + rng() * 35;
    const up = 40 + rng() * 50;
    const down = 120 + rng() * 50;
    path += ` C ${x + step * 0.3} ${up}, ${x + step * 0.7} ${down}, ${x + step} ${100 + rng() * 60}`;
    x += step;
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="200">
  <rect width="600" height="200" fill="white"/>
  <path d="${path}" fill="none" stroke="#1a237e" stroke-width="3" stroke-linecap="round"/>
  <line x1="30" y1="185" x2="570" y2="185" stroke="#bbb" stroke-width="1"/>
</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

const SIGNERS = ["Dana Reyes", "Sam Okafor", "Priya Natarajan", "Luis Ortega", "Mei Chen", "Jordan Blake"];

/** The site contact who signs for the sandbox job (one of a few names, from the order's id). */
export function sandboxSigner(orderId: string): string {
  return SIGNERS[Math.floor(rngOf(seedOf(orderId, "signer"))() * SIGNERS.length)] ?? "Site contact";
}
