// What an attachment's bytes are, decided from the bytes alone (file-type's sniffing; never the name or
// the header a client sent), and what is kept of them: a PDF as received; an image re-encoded by sharp
// with its orientation applied and every metadata block (EXIF position and device, XMP, ICC comments)
// left out, plus a 320 px WebP thumbnail. The capture claims (time, position) are read from the EXIF
// block before it goes, for the sealed record.

import { fileTypeFromBuffer } from "file-type";
import sharp from "sharp";
import { ApiError } from "../../errors.js";
import { type CaptureClaims, captureClaims } from "./capture-claims.js";

export const ACCEPTED_MEDIA_TYPES = ["image/jpeg", "image/png", "image/webp", "application/pdf"] as const;
type AcceptedMediaType = (typeof ACCEPTED_MEDIA_TYPES)[number];

/** The thumbnail's longest side, pixels. */
const THUMBNAIL_PX = 320;

/** What is kept of an accepted upload. */
export interface ProcessedMedia {
  mediaType: AcceptedMediaType;
  /** The bytes stored and served: the PDF as sent, or the image without its metadata. */
  bytes: Buffer;
  /** A WebP of the image, at most THUMBNAIL_PX on its longest side; null for a PDF. */
  thumbnail: Buffer | null;
  claims: CaptureClaims;
}

const HEIF_TYPES = new Set(["image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence"]);

function refuseType(detected: string | undefined): never {
  if (detected !== undefined && HEIF_TYPES.has(detected)) {
    // The sharp build installed decodes AVIF only (its libheif has no HEVC decoder), so HEIC cannot
    // be converted here: refused, saying what to send instead.
    throw new ApiError(
      "unsupported_media_type",
      "HEIC/HEIF photos are not accepted: send the photo as JPEG (on an iPhone: Settings > Camera > Formats > Most Compatible, or share it as JPEG).",
      { extra: { field: "file", detected_type: detected, accepted_types: [...ACCEPTED_MEDIA_TYPES] } },
    );
  }
  throw new ApiError(
    "unsupported_media_type",
    `file must be a JPEG, PNG or WebP image or a PDF (judged from its content${detected ? `, which is ${detected}` : ", which is none of them"}).`,
    {
      extra: { field: "file", detected_type: detected ?? null, accepted_types: [...ACCEPTED_MEDIA_TYPES] },
    },
  );
}

function unreadable(what: string): ApiError {
  return new ApiError("unreadable_file", `file cannot be read: ${what}`, { extra: { field: "file" } });
}

async function processImage(bytes: Buffer, mediaType: AcceptedMediaType): Promise<ProcessedMedia> {
  let exif: Buffer | undefined;
  let served: Buffer;
  let thumbnail: Buffer;
  try {
    // failOn "warning": a truncated or damaged image is refused, not served half grey.
    const image = sharp(bytes, { failOn: "warning" });
    exif = (await image.metadata()).exif;
    // No withMetadata(): sharp writes none of the input's metadata (EXIF, XMP, IPTC, comments). rotate()
    // without arguments applies the EXIF orientation to the pixels, so dropping the tag loses nothing.
    const oriented = image.clone().rotate();
    served =
      mediaType === "image/png"
        ? await oriented.png().toBuffer()
        : mediaType === "image/webp"
          ? await oriented.webp({ quality: 90 }).toBuffer()
          : await oriented.jpeg({ quality: 90, mozjpeg: true }).toBuffer();
    thumbnail = await image
      .clone()
      .rotate()
      .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: "inside", withoutEnlargement: true })
      .webp({ quality: 75 })
      .toBuffer();
  } catch (error) {
    throw unreadable(
      `the ${mediaType} image does not decode (truncated or damaged: ${(error as Error).message}).`,
    );
  }
  return { mediaType, bytes: served, thumbnail, claims: captureClaims(exif) };
}

/** A PDF that ends before its end-of-file marker was cut short in transit. */
function checkPdf(bytes: Buffer): void {
  const tail = bytes.subarray(Math.max(0, bytes.length - 1024)).toString("latin1");
  if (!tail.includes("%%EOF")) throw unreadable("the PDF has no end-of-file marker (truncated).");
}

/** Sniffs and processes an upload; an ApiError (415 or 422) for anything not accepted. */
export async function processMedia(bytes: Buffer): Promise<ProcessedMedia> {
  const detected = (await fileTypeFromBuffer(bytes))?.mime;
  if (!(ACCEPTED_MEDIA_TYPES as readonly string[]).includes(detected ?? "")) refuseType(detected);
  const mediaType = detected as AcceptedMediaType;
  if (mediaType === "application/pdf") {
    checkPdf(bytes);
    return { mediaType, bytes, thumbnail: null, claims: {} };
  }
  return processImage(bytes, mediaType);
}
