// The orphan collector: a blob is put before the transaction that writes the attachment naming it (so no
// record ever names a missing blob), and an upload refused or interrupted between the two leaves a blob
// no attachment names. Those are removed once a day old: long past any upload still on its way (putting
// a blob again makes it young, storage/blobs/). Run with the hourly retention pass (webhook-dispatcher.ts).

import type { BlobStore } from "../storage/blobs/blob-store.js";
import type { AttachmentStore } from "../storage/store.js";

export const ORPHAN_AGE_MS = 24 * 3_600_000;
const BATCH = 200;

/** Removes the blobs stored before `now` less a day that no attachment names; how many. */
export async function collectOrphanBlobs(
  blobs: BlobStore,
  attachments: Pick<AttachmentStore, "referenced">,
  now: Date,
): Promise<number> {
  const cutoff = new Date(now.getTime() - ORPHAN_AGE_MS);
  let removed = 0;
  let batch: string[] = [];
  const sweep = async () => {
    const named = await attachments.referenced(batch);
    for (const sha256 of batch) if (!named.has(sha256) && (await blobs.delete(sha256))) removed++;
    batch = [];
  };
  for await (const sha256 of blobs.storedBefore(cutoff)) {
    batch.push(sha256);
    if (batch.length >= BATCH) await sweep();
  }
  if (batch.length > 0) await sweep();
  return removed;
}
