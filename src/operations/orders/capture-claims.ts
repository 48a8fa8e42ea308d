// What a photo says of where and when it was taken, read from its EXIF block (the bytes sharp's
// metadata() hands over: "Exif\0\0" then a TIFF structure) with exif-reader, the parser sharp's own
// documentation pairs with metadata().exif: DateTimeOriginal and the GPS position. These become claims of
// the attachment's sealed record; the bytes served have the EXIF block stripped. Claims, not facts: the
// phone wrote them and anyone can edit them. Pure: bytes in, values out; a block the parser cannot read
// (damaged, or not EXIF) gives no claims rather than refusing the photo.

import exifReader from "exif-reader";

export interface CaptureClaims {
  /** DateTimeOriginal as the camera wrote it, local time without a zone: 2026-11-28T09:15:30. */
  capturedAt?: string;
  /** The GPS position, degrees (south and west negative). */
  position?: { lat: number; lon: number };
}

/** Degrees, minutes and seconds as degrees; undefined unless three finite numbers. */
function degrees(dms: unknown): number | undefined {
  if (!Array.isArray(dms) || dms.length < 3) return undefined;
  const [d, m, s] = dms as unknown[];
  if (![d, m, s].every((v) => typeof v === "number" && Number.isFinite(v))) return undefined;
  return (d as number) + (m as number) / 60 + (s as number) / 3600;
}

function positionOf(gps: Record<string, unknown> | undefined): CaptureClaims["position"] {
  const lat = degrees(gps?.GPSLatitude);
  const lon = degrees(gps?.GPSLongitude);
  if (lat === undefined || lon === undefined || lat > 90 || lon > 180) return undefined;
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  return {
    lat: round(gps?.GPSLatitudeRef === "S" ? -lat : lat),
    lon: round(gps?.GPSLongitudeRef === "W" ? -lon : lon),
  };
}

/** The capture claims of an EXIF block; none (an empty object) when it holds none or is not EXIF. */
export function captureClaims(exif: Buffer | undefined): CaptureClaims {
  if (!exif || exif.length < 8) return {};
  let tags: ReturnType<typeof exifReader>;
  try {
    tags = exifReader(exif);
  } catch {
    return {};
  }
  const claims: CaptureClaims = {};
  // exif-reader gives DateTimeOriginal's digits as a Date in UTC: the camera's local time, no zone.
  const taken = tags.Photo?.DateTimeOriginal;
  if (taken instanceof Date && !Number.isNaN(taken.getTime())) {
    claims.capturedAt = taken.toISOString().slice(0, 19);
  }
  const position = positionOf(tags.GPSInfo as Record<string, unknown> | undefined);
  if (position) claims.position = position;
  return claims;
}
