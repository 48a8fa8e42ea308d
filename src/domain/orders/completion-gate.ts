// What an account may require before a job is completed, and what is missing: a signature of the site
// contact, a photo of the work (the checklist's required items are the other half of the gate:
// checklist.ts completionRefusal). The contractor's "completed" is refused while any is missing, naming each,
// so the phone can say what to do next. Requirements are the account's, for each of its modes.

/** The proof an account requires of every job of one mode before it is completed. */
export interface ProofRequirements {
  /** The site contact signs on the contractor's phone (an attachment of kind signature). */
  signature_required: boolean;
  /** At least one photo added by the contractor holding the job. */
  photo_required: boolean;
}

export const NO_REQUIREMENTS: ProofRequirements = { signature_required: false, photo_required: false };

/** What the order holds that the requirements look at: the contractor's signatures and photos. */
export interface CompletionEvidence {
  requirements: ProofRequirements;
  signatures: number;
  photos: number;
}

/** One thing a completion lacks: a required checklist item (named), a photo, a signature. */
export interface MissingProof {
  requirement: "checklist_item" | "photo" | "signature";
  message: string;
  item_id?: string;
  label?: string;
}

/** The proof still missing for the job to be completed, in the order the contractor would collect it. */
export function missingForCompletion(evidence: CompletionEvidence): MissingProof[] {
  const missing: MissingProof[] = [];
  if (evidence.requirements.photo_required && evidence.photos === 0) {
    missing.push({ requirement: "photo", message: "The account requires a photo of the work: add one." });
  }
  if (evidence.requirements.signature_required && evidence.signatures === 0) {
    missing.push({
      requirement: "signature",
      message: "The account requires the site contact's signature: collect it on site.",
    });
  }
  return missing;
}
