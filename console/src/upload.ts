// The contractor's files reach the service by the tus protocol (tus-js-client), at
// /api/orders/{order_id}/uploads, so a phone on a bad signal never sends a photo again from its first
// byte: the file goes in chunks, each acknowledged; a dropped connection is retried and resumes where the
// service says the upload stands (a HEAD), and a photo picked again after a reload resumes its upload too
// (its URL kept in localStorage until the upload ends). Authenticated as every console request is: the
// session cookie the browser sends by itself, and the session's CSRF token on each request (the tus
// requests all change state but the HEAD). The service answers the last PATCH with the attachment, and
// names it in an Attachment-Id header (also on a HEAD that finds the upload done, when the last PATCH's
// answer was lost): docs/proof-of-work.md.

import { type DetailedError, type HttpResponse, Upload } from "tus-js-client";
import { ApiProblem, get, session } from "./api";
import type { Attachment } from "./types";

/** Each PATCH's share of the file: small enough that a weak signal acknowledges one now and then. */
const CHUNK_BYTES = 512 * 1024;
/** The waits before each retry after a failure that made no progress (progress starts the list again). */
const RETRY_DELAYS_MS = [0, 1_000, 3_000, 5_000, 10_000, 20_000, 30_000];

interface Problem {
  code?: string;
  detail?: string;
  errors?: Array<{ message: string }>;
}

function problemBody(res: HttpResponse | null | undefined): Problem {
  try {
    return JSON.parse(res?.getBody() ?? "") as Problem;
  } catch {
    return {};
  }
}

/** Whether a failed request is worth sending again: no answer, the service busy or failing, or the
 * upload's offset moved (tus's 409: a HEAD tells where to resume). A refusal (413, 415, 422, a 409 over
 * the quota...) is not. The browser's being offline does not stop it: its delays run on. */
function retryable(err: Error | DetailedError): boolean {
  const res = (err as DetailedError).originalResponse;
  const status = res?.getStatus() ?? 0;
  if (status === 0 || status >= 500 || status === 423 || status === 429) return true;
  return status === 409 && problemBody(res).code === "upload_offset_mismatch";
}

function problemOf(err: Error | DetailedError, resumable: boolean): ApiProblem {
  const res = (err as DetailedError).originalResponse;
  const status = res?.getStatus() ?? 0;
  if (status === 0) {
    const next = resumable ? "pick the same file again to go on from where it stopped" : "try again";
    return new ApiProblem(0, "network", `The upload did not get through: ${next}.`);
  }
  const body = problemBody(res);
  const detail = body.errors?.length ? body.errors.map((e) => e.message).join("; ") : body.detail;
  return new ApiProblem(status, body.code ?? "error", detail ?? "The upload was refused.");
}

/** The attachment the finished upload became: the last PATCH's body, or (a HEAD found it done) the
 * order's attachment its Attachment-Id header names. */
async function attachmentOf(orderId: string, last: HttpResponse): Promise<Attachment> {
  const body = problemBody(last) as Partial<Attachment>;
  if (typeof body.attachment_id === "string") return body as Attachment;
  const id = last.getHeader("Attachment-Id");
  if (!id) throw new ApiProblem(last.getStatus(), "error", "The service did not say what the upload became.");
  const { attachments } = await get<{ attachments: Attachment[] }>(
    `/api/orders/${encodeURIComponent(orderId)}/attachments`,
  );
  const found = attachments.find((a) => a.attachment_id === id);
  if (!found) throw new ApiProblem(404, "not_found", `Attachment ${id} is not on this order.`);
  return found;
}

/**
 * Uploads one file as an attachment of the job (`fields`: kind, caption, signer_name), reporting the share
 * sent (0-1). `resumable`: the upload's URL is kept on this phone until it ends, so the same file (its
 * name, type, size and time) picked again after a reload goes on from where it stopped; not for a file
 * drawn in the page (a signature), which has no such identity.
 */
export function upload(
  orderId: string,
  file: Blob,
  name: string,
  fields: Record<string, string>,
  onProgress: (share: number) => void,
  resumable: boolean,
): Promise<Attachment> {
  // Absolute: tus-js-client resolves the upload's Location against it.
  const endpoint = `${window.location.origin}/api/orders/${encodeURIComponent(orderId)}/uploads`;
  return new Promise((resolve, reject) => {
    const tus = new Upload(file, {
      endpoint,
      metadata: { filename: name, ...fields },
      chunkSize: CHUNK_BYTES,
      retryDelays: RETRY_DELAYS_MS,
      storeFingerprintForResuming: resumable,
      removeFingerprintOnSuccess: true,
      // One file of one job: its kind too, so a photo is never resumed as a signature's upload.
      fingerprint: (f: File) =>
        Promise.resolve(
          ["fd", endpoint, fields.kind ?? "photo", f.name, f.type, f.size, f.lastModified].join("|"),
        ),
      onBeforeRequest: (req) => {
        req.setHeader("accept", "application/json");
        req.setHeader("x-csrf-token", session.value?.csrf_token ?? "");
      },
      onShouldRetry: retryable,
      onProgress: (sent, total) => onProgress(total > 0 ? sent / total : 0),
      onSuccess: ({ lastResponse }) => {
        attachmentOf(orderId, lastResponse).then(resolve, reject);
      },
      onError: (err) => {
        const problem = problemOf(err, resumable);
        // The session ended (expired, signed out elsewhere): back to the sign-in form, as api.ts does.
        if (problem.status === 401) session.value = null;
        reject(problem);
      },
    });
    if (!resumable) {
      tus.start();
      return;
    }
    tus
      .findPreviousUploads()
      .then((previous) => {
        const latest = previous.sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))[0];
        if (latest) tus.resumeFromPreviousUpload(latest);
      })
      // Storage out of reach (a private window's quota): a new upload.
      .catch(() => undefined)
      .finally(() => tus.start());
  });
}
