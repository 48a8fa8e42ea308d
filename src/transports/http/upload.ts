// Reads an upload operation's multipart/form-data body (@fastify/multipart, registered for those routes
// alone): one file part named `file`, read into memory up to the operation's limit, and short text
// fields. What is wrong with the body becomes a problem of the closed set: too large 413, not multipart
// 415, more than one file or an unknown part 422, a broken body 400.

import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError, validationError } from "../../errors.js";
import type { ReceivedUpload } from "../../operations/kernel/operation.js";
import { fileTooLarge } from "../../operations/orders/attachment-upload.js";

const FIELD_BYTES = 4096;

/** The multipart parser, in the scope of the upload routes registered on `app`. */
export async function registerMultipart(app: FastifyInstance): Promise<void> {
  await app.register(multipart, {
    limits: { files: 1, fields: 8, parts: 9, fieldSize: FIELD_BYTES, fieldNameSize: 100, headerPairs: 100 },
  });
}

function multipartError(error: unknown, maxBytes: number): unknown {
  if (error instanceof ApiError) return error;
  switch ((error as { code?: string }).code) {
    case "FST_REQ_FILE_TOO_LARGE":
      return fileTooLarge(maxBytes);
    case "FST_FILES_LIMIT":
      return validationError([{ field: "file", message: "send one file per upload" }]);
    case "FST_PARTS_LIMIT":
    case "FST_FIELDS_LIMIT":
      return validationError([{ field: "body", message: "too many form fields (file, kind, caption)" }]);
    case "FST_INVALID_MULTIPART_CONTENT_TYPE":
      return notMultipart();
    default:
      return new ApiError("invalid_request", "The multipart/form-data body could not be read.");
  }
}

function notMultipart(): ApiError {
  return new ApiError(
    "unsupported_media_type",
    "Send the upload as multipart/form-data: a part named file, and optional kind and caption fields.",
  );
}

/** The upload's file and fields, the file at most `maxBytes`. */
export async function readUpload(request: FastifyRequest, maxBytes: number): Promise<ReceivedUpload> {
  if (!request.isMultipart()) throw notMultipart();
  const fields: Record<string, string> = {};
  let file: ReceivedUpload["file"] = null;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes } })) {
      if (part.type === "file") {
        if (part.fieldname !== "file") {
          throw validationError([{ field: part.fieldname, message: "the file's part must be named file" }]);
        }
        const bytes = await part.toBuffer();
        file = { bytes, filename: part.filename || null };
      } else {
        if (part.valueTruncated) {
          throw validationError([{ field: part.fieldname, message: `at most ${FIELD_BYTES} bytes` }]);
        }
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    throw multipartError(error, maxBytes);
  }
  return { fields, file };
}
