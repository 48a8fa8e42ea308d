// What a photo says of where and when it was taken, read from its EXIF block (the bytes sharp's
// metadata() hands over: "Exif\0\0" then a TIFF structure): DateTimeOriginal and the GPS position. These
// become claims of the attachment's sealed record; the bytes served have the EXIF block stripped. Claims,
// not facts: the phone wrote them and anyone can edit them. Pure: bytes in, values out.

export interface CaptureClaims {
  /** DateTimeOriginal as the camera wrote it, local time without a zone: 2026-11-28T09:15:30. */
  capturedAt?: string;
  /** The GPS position, degrees (south and west negative). */
  position?: { lat: number; lon: number };
}

const EXIF_IFD_POINTER = 0x8769;
const GPS_IFD_POINTER = 0x8825;
const DATE_TIME_ORIGINAL = 0x9003;
const GPS_LAT_REF = 1;
const GPS_LAT = 2;
const GPS_LON_REF = 3;
const GPS_LON = 4;
const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8 };

interface Entry {
  type: number;
  count: number;
  /** Where the value's bytes are (inline in the entry when they fit in 4 bytes). */
  at: number;
}

class Tiff {
  constructor(
    private readonly b: Buffer,
    private readonly little: boolean,
  ) {}

  u16(at: number): number {
    return this.little ? this.b.readUInt16LE(at) : this.b.readUInt16BE(at);
  }

  u32(at: number): number {
    return this.little ? this.b.readUInt32LE(at) : this.b.readUInt32BE(at);
  }

  /** The entries of the IFD at `offset`, by tag; empty when it lies outside the block. */
  ifd(offset: number): Map<number, Entry> {
    const entries = new Map<number, Entry>();
    if (offset + 2 > this.b.length) return entries;
    const count = this.u16(offset);
    for (let i = 0; i < count; i++) {
      const e = offset + 2 + i * 12;
      if (e + 12 > this.b.length) break;
      const type = this.u16(e + 2);
      const n = this.u32(e + 4);
      const bytes = (TYPE_SIZES[type] ?? 0) * n;
      const at = bytes <= 4 ? e + 8 : this.u32(e + 8);
      if (bytes === 0 || at + bytes > this.b.length) continue;
      entries.set(this.u16(e), { type, count: n, at });
    }
    return entries;
  }

  ascii(entry: Entry | undefined): string | undefined {
    if (entry?.type !== 2) return undefined;
    return this.b.toString("latin1", entry.at, entry.at + entry.count).replace(/\0.*$/s, "");
  }

  /** Three rationals (degrees, minutes, seconds) as degrees. */
  degrees(entry: Entry | undefined): number | undefined {
    if (entry?.type !== 5 || entry.count < 3) return undefined;
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const den = this.u32(entry.at + i * 8 + 4);
      if (den === 0) return undefined;
      value += this.u32(entry.at + i * 8) / den / 60 ** i;
    }
    return value;
  }
}

function dateOf(text: string | undefined): string | undefined {
  const m = text ? /^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})/.exec(text) : null;
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}` : undefined;
}

function positionOf(tiff: Tiff, gps: Map<number, Entry>): CaptureClaims["position"] {
  const lat = tiff.degrees(gps.get(GPS_LAT));
  const lon = tiff.degrees(gps.get(GPS_LON));
  if (lat === undefined || lon === undefined || lat > 90 || lon > 180) return undefined;
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  return {
    lat: round(tiff.ascii(gps.get(GPS_LAT_REF)) === "S" ? -lat : lat),
    lon: round(tiff.ascii(gps.get(GPS_LON_REF)) === "W" ? -lon : lon),
  };
}

/** The capture claims of an EXIF block; none (an empty object) when it holds none or is not EXIF. */
export function captureClaims(exif: Buffer | undefined): CaptureClaims {
  if (!exif) return {};
  const start = exif.subarray(0, 6).toString("latin1") === "Exif\0\0" ? 6 : 0;
  const b = exif.subarray(start);
  if (b.length < 8) return {};
  const order = b.toString("latin1", 0, 2);
  if (order !== "II" && order !== "MM") return {};
  const tiff = new Tiff(b, order === "II");
  const ifd0 = tiff.ifd(tiff.u32(4));
  const claims: CaptureClaims = {};
  const exifIfd = ifd0.get(EXIF_IFD_POINTER);
  if (exifIfd?.type === 4) {
    const capturedAt = dateOf(tiff.ascii(tiff.ifd(tiff.u32(exifIfd.at)).get(DATE_TIME_ORIGINAL)));
    if (capturedAt) claims.capturedAt = capturedAt;
  }
  const gpsIfd = ifd0.get(GPS_IFD_POINTER);
  if (gpsIfd?.type === 4) {
    const position = positionOf(tiff, tiff.ifd(tiff.u32(gpsIfd.at)));
    if (position) claims.position = position;
  }
  return claims;
}
