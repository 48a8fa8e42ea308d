// A photo's capture claims, read from the EXIF block sharp hands over: the position with its hemisphere,
// the camera's local time, and nothing (never a refusal) from a block that is damaged or absent.

import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { captureClaims } from "../../../src/operations/orders/capture-claims.js";

async function exifOf(gps: Record<string, string>, taken?: string): Promise<Buffer | undefined> {
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#888" } })
    .jpeg()
    .withExif({ IFD0: { Make: "Test" }, ...(taken ? { IFD2: { DateTimeOriginal: taken } } : {}), IFD3: gps })
    .toBuffer();
  return (await sharp(jpeg).metadata()).exif;
}

describe("capture claims", () => {
  it("reads the position, south and west negative, and the local capture time", async () => {
    const exif = await exifOf(
      {
        GPSLatitudeRef: "S",
        GPSLatitude: "33/1 52/1 1080/100",
        GPSLongitudeRef: "W",
        GPSLongitude: "70/1 30/1 0/1",
      },
      "2026:11:28 09:15:30",
    );
    expect(captureClaims(exif)).toEqual({
      capturedAt: "2026-11-28T09:15:30",
      position: { lat: -33.869667, lon: -70.5 },
    });
  });

  it("gives no claims for a block without them, a damaged one, or none", async () => {
    expect(captureClaims(await exifOf({}))).toEqual({});
    const exif = (await exifOf({ GPSLatitudeRef: "N", GPSLatitude: "40/1 0/1 0/1" })) as Buffer;
    // Only a latitude: no position.
    expect(captureClaims(exif)).toEqual({});
    expect(captureClaims(exif.subarray(0, 20))).toEqual({});
    expect(captureClaims(Buffer.from("Exif\0\0MM\0*\0\0\0\x08\xff\xff", "latin1"))).toEqual({});
    expect(captureClaims(Buffer.from("not exif at all"))).toEqual({});
    expect(captureClaims(undefined)).toEqual({});
  });
});
