// The proof a contractor collects on site, from the phone: photos taken with the camera (the file input's
// `capture`), uploaded with their progress shown, and the site contact's signature drawn on a pad
// (signature_pad) with the signer's printed name, each sent resumably by tus (../upload.ts). What the
// account requires before completion is asked for by the service itself: "Completed" answers naming what
// is missing.

import { useEffect, useRef, useState } from "preact/hooks";
import SignaturePad from "signature_pad";
import { ApiProblem } from "../api";
import type { Attachment, Job } from "../types";
import { upload } from "../upload";
import { JobChecklist } from "./job-checklist";

function Photos({
  job,
  added,
  setAdded,
}: {
  job: Job;
  added: readonly Attachment[];
  setAdded: (update: (list: Attachment[]) => Attachment[]) => void;
}) {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = `photo-${job.order_id}`;
  const onFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    setError(null);
    setProgress(0);
    try {
      const a = await upload(job.order_id, file, file.name || "photo.jpg", {}, setProgress, true);
      setAdded((list) => [...list, a]);
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The photo did not upload; try again.");
    } finally {
      setProgress(null);
    }
  };
  return (
    <div class="proof-step">
      <label for={id} class="btn btn-quiet btn-big btn-block proof-camera">
        Take a photo
      </label>
      <input
        id={id}
        class="sr-only"
        type="file"
        accept="image/*,application/pdf"
        capture="environment"
        onChange={(e) => void onFile(e.target as HTMLInputElement)}
      />
      {progress !== null && (
        <progress class="proof-progress" max={1} value={progress} aria-label="Upload progress" />
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {added.length > 0 && (
        <ul class="proof-files" aria-label="Photos added">
          {added.map((a) => (
            <li key={a.attachment_id} class="proof-file" data-kind={a.kind}>
              {a.thumbnail_url ? (
                <img src={a.thumbnail_url} alt={a.filename ?? "photo"} />
              ) : (
                <span class="proof-doc">PDF</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Signature({ job }: { job: Job }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const pad = useRef<SignaturePad | null>(null);
  const [name, setName] = useState("");
  const [empty, setEmpty] = useState(true);
  const [saved, setSaved] = useState<Attachment | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    // The canvas drawn at the screen's pixel density, as wide as the card.
    const ratio = Math.max(window.devicePixelRatio || 1, 1);
    el.width = el.offsetWidth * ratio;
    el.height = el.offsetHeight * ratio;
    el.getContext("2d")?.scale(ratio, ratio);
    const p = new SignaturePad(el, { backgroundColor: "rgb(255,255,255)", penColor: "#1a237e" });
    p.addEventListener("endStroke", () => setEmpty(p.isEmpty()));
    pad.current = p;
    return () => p.off();
  }, []);
  const save = async () => {
    const p = pad.current;
    if (!p || p.isEmpty() || !name.trim()) return;
    setBusy(true);
    setError(null);
    try {
      const el = canvas.current as HTMLCanvasElement;
      const blob = await new Promise<Blob>((resolve, reject) =>
        el.toBlob((b) => (b ? resolve(b) : reject(new Error("the pad gave no image"))), "image/png"),
      );
      setSaved(
        await upload(
          job.order_id,
          blob,
          "signature.png",
          { kind: "signature", signer_name: name.trim() },
          () => {},
          false,
        ),
      );
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The signature did not upload; try again.");
    } finally {
      setBusy(false);
    }
  };
  const nameId = `signer-${job.order_id}`;
  if (saved) {
    return (
      <p class="proof-signed" role="status">
        Signed by <strong>{saved.signer_name}</strong>
      </p>
    );
  }
  return (
    <div class="proof-step">
      <span class="proof-label" id={`pad-${job.order_id}`}>
        Site contact's signature
      </span>
      <canvas ref={canvas} class="signature-pad" aria-labelledby={`pad-${job.order_id}`} />
      <label for={nameId}>Signer's name</label>
      <input
        id={nameId}
        maxLength={200}
        autoComplete="off"
        value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
      />
      <div class="proof-actions">
        <button
          type="button"
          class="btn btn-quiet"
          disabled={busy || empty}
          onClick={() => {
            pad.current?.clear();
            setEmpty(true);
          }}
        >
          Clear
        </button>
        <button
          type="button"
          class="btn btn-primary"
          disabled={busy || empty || !name.trim()}
          onClick={() => void save()}
        >
          Save signature
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** What the contractor collects on site before "Completed": photos, the checklist, the signature. */
export function JobProof({ job }: { job: Job }) {
  const [photos, setPhotos] = useState<Attachment[]>([]);
  return (
    <section class="job-proof" aria-label="Proof of work">
      <Photos job={job} added={photos} setAdded={setPhotos} />
      <JobChecklist job={job} photos={photos} />
      <Signature job={job} />
    </section>
  );
}

/** The phone's position for a check-in or check-out, when it gives one within a few seconds (none
 * otherwise: the step is reported without it). */
export function phonePosition(): Promise<{ lat: number; lon: number; accuracy_m: number } | undefined> {
  if (!("geolocation" in navigator)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    navigator.geolocation.getCurrentPosition(
      (p) =>
        resolve({
          lat: Math.round(p.coords.latitude * 1e6) / 1e6,
          lon: Math.round(p.coords.longitude * 1e6) / 1e6,
          accuracy_m: Math.min(100_000, Math.round(p.coords.accuracy)),
        }),
      () => resolve(undefined),
      { timeout: 5_000, maximumAge: 60_000, enableHighAccuracy: true },
    );
  });
}
