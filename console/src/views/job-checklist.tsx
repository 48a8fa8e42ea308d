// The job's checklist on the contractor's phone: each item answered as the contractor goes (yes/no at a
// tap, a number in its unit, a note, a photo it took), saved at once. Offline-tolerant: an answer that
// cannot reach the service is kept on the phone (localStorage) and sent when the browser is back online
// or the page opens again; the service accepts an answer sent twice and changes nothing.

import { useEffect, useState } from "preact/hooks";
import { ApiProblem, get, post } from "../api";
import type { Attachment, Job } from "../types";

type Value = boolean | number | string;

interface Item {
  item_id: string;
  label: string;
  kind: "yes_no" | "number" | "text" | "photo";
  required: boolean;
  unit?: string | null;
  min?: number | null;
  max?: number | null;
  max_length?: number;
  answer: { value: Value; answered_at: string } | null;
}

export interface Checklist {
  order_id: string;
  items: Item[];
  unanswered_required: Array<{ item_id: string; label: string }>;
}

const QUEUE_KEY = "fd-checklist-queue";
type Queue = Record<string, Record<string, Value>>;

function readQueue(): Queue {
  try {
    return JSON.parse(localStorage.getItem(QUEUE_KEY) ?? "{}") as Queue;
  } catch {
    return {};
  }
}

function writeQueue(queue: Queue): void {
  try {
    localStorage.setItem(QUEUE_KEY, JSON.stringify(queue));
  } catch {
    // storage full or denied: the answer stays in the page's memory only
  }
}

function enqueue(orderId: string, itemId: string, value: Value): void {
  const queue = readQueue();
  queue[orderId] = { ...(queue[orderId] ?? {}), [itemId]: value };
  writeQueue(queue);
}

/** Sends the job's queued answers in one request; what the service then holds, or why not. */
async function flush(orderId: string): Promise<{ checklist?: Checklist; offline?: boolean; error?: string }> {
  const pending = readQueue()[orderId];
  if (!pending || Object.keys(pending).length === 0) return {};
  const answers = Object.entries(pending).map(([item_id, value]) => ({ item_id, value }));
  try {
    const checklist = await post<Checklist>("/api/contractor/v1/jobs/checklist", {
      order_id: orderId,
      answers,
    });
    const queue = readQueue();
    delete queue[orderId];
    writeQueue(queue);
    return { checklist };
  } catch (err) {
    if (err instanceof ApiProblem && err.status > 0) {
      // Refused (an answer out of range, the job moved on): dropped, and said.
      const queue = readQueue();
      delete queue[orderId];
      writeQueue(queue);
      return { error: err.message };
    }
    return { offline: true };
  }
}

function ItemInput({
  item,
  photos,
  onAnswer,
}: {
  item: Item;
  photos: readonly Attachment[];
  onAnswer: (value: Value) => void;
}) {
  const id = `item-${item.item_id}`;
  const [draft, setDraft] = useState(item.answer ? String(item.answer.value) : "");
  const label = (
    <label for={id} class="check-label">
      {item.label}
      {item.kind === "number" && item.unit ? ` (${item.unit})` : ""}
      {item.required && (
        <span class="required" title="Required before completion">
          {" "}
          *
        </span>
      )}
    </label>
  );
  switch (item.kind) {
    case "yes_no":
      return (
        <fieldset class="check-item check-yesno" data-item-id={item.item_id}>
          <legend class="check-label">
            {item.label}
            {item.required && <span class="required"> *</span>}
          </legend>
          {[true, false].map((v) => (
            <button
              key={String(v)}
              type="button"
              class={item.answer?.value === v ? "btn btn-primary" : "btn btn-quiet"}
              aria-pressed={item.answer?.value === v}
              onClick={() => onAnswer(v)}
            >
              {v ? "Yes" : "No"}
            </button>
          ))}
        </fieldset>
      );
    case "number":
      return (
        <div class="check-item" data-item-id={item.item_id}>
          {label}
          <input
            id={id}
            type="number"
            inputMode="decimal"
            min={item.min ?? undefined}
            max={item.max ?? undefined}
            step="any"
            value={draft}
            onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
            onChange={() => {
              if (draft !== "" && Number.isFinite(Number(draft))) onAnswer(Number(draft));
            }}
          />
        </div>
      );
    case "text":
      return (
        <div class="check-item" data-item-id={item.item_id}>
          {label}
          <textarea
            id={id}
            rows={2}
            maxLength={item.max_length ?? 500}
            value={draft}
            onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
            onChange={() => {
              if (draft.trim() !== "") onAnswer(draft.trim());
            }}
          />
        </div>
      );
    case "photo": {
      const chosen = typeof item.answer?.value === "string" ? item.answer.value : "";
      return (
        <div class="check-item" data-item-id={item.item_id}>
          {label}
          {photos.length === 0 ? (
            <p class="muted">Take a photo above, then choose it here.</p>
          ) : (
            <select
              id={id}
              value={chosen}
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                if (v) onAnswer(v);
              }}
            >
              <option value="">Choose a photo…</option>
              {photos.map((p, i) => (
                <option key={p.attachment_id} value={p.attachment_id}>
                  Photo {i + 1}
                  {p.filename ? ` (${p.filename})` : ""}
                </option>
              ))}
            </select>
          )}
        </div>
      );
    }
  }
}

export function JobChecklist({ job, photos }: { job: Job; photos: readonly Attachment[] }) {
  const [checklist, setChecklist] = useState<Checklist | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const send = async () => {
    const out = await flush(job.order_id);
    if (out.checklist) {
      setChecklist(out.checklist);
      setNote(null);
    }
    if (out.offline) setNote("Saved on this phone; sent when you are back online.");
    if (out.error) setError(out.error);
  };
  useEffect(() => {
    let stale = false;
    get<Checklist>(`/api/orders/${job.order_id}/checklist`)
      .then((c) => {
        if (!stale) setChecklist(c);
      })
      .catch(() => {});
    // Answers left on the phone by an earlier visit go now; more whenever the browser is back online.
    void send();
    const online = () => void send();
    window.addEventListener("online", online);
    return () => {
      stale = true;
      window.removeEventListener("online", online);
    };
  }, [job.order_id]);
  if (!checklist || checklist.items.length === 0) return null;
  const answer = (item: Item, value: Value) => {
    setError(null);
    // Shown at once; the queue sends it (kept on the phone until the service has it).
    setChecklist({
      ...checklist,
      items: checklist.items.map((i) =>
        i.item_id === item.item_id ? { ...i, answer: { value, answered_at: new Date().toISOString() } } : i,
      ),
    });
    enqueue(job.order_id, item.item_id, value);
    void send();
  };
  const left = checklist.unanswered_required.length;
  return (
    <section class="job-checklist" aria-label="Checklist">
      <h4>
        Checklist{" "}
        <span class={left > 0 ? "muted" : "done"}>
          {left > 0 ? `${left} required left` : "all required answered"}
        </span>
      </h4>
      {checklist.items.map((item) => (
        <ItemInput key={item.item_id} item={item} photos={photos} onAnswer={(v) => answer(item, v)} />
      ))}
      {note && (
        <p class="notice" role="status">
          {note}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
