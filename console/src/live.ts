// The live event stream (GET /api/events, Server-Sent Events) for the signed-in session, sent with its
// cookie (same origin). The browser reconnects by itself after a dropped connection, with Last-Event-ID.
// When it gives up (the server refused the stream: the session ended, or the key holds too many streams),
// the console checks the session (an ended one goes back to the sign-in form) and opens a new stream
// after a pause, resuming after the last event it saw (`after`), so nothing is missed.

import { signal } from "@preact/signals";
import { ORDER_EVENT_TYPES } from "../../src/domain/orders/statuses";
import { loadSession, session } from "./api";
import type { StreamEvent } from "./types";

const RETRY_MS = [2_000, 5_000, 10_000, 30_000];

export type LiveState = "connecting" | "live" | "reconnecting";
export const liveState = signal<LiveState>("connecting");

/** Opens the stream; `onEvent` hears every event of `types` (the order events unless told); the function
 * returned closes it for good. */
export function subscribe(
  onEvent: (event: StreamEvent) => void,
  types: readonly string[] = ORDER_EVENT_TYPES,
): () => void {
  let source: EventSource | null = null;
  let lastId: string | null = null;
  let failures = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const listener = (e: MessageEvent<string>) => {
    if (e.lastEventId) lastId = e.lastEventId;
    try {
      onEvent(JSON.parse(e.data) as StreamEvent);
    } catch {
      // A line the console cannot read is skipped; the next list load shows the truth.
    }
  };

  const open = () => {
    if (stopped) return;
    const url = lastId === null ? "/api/events" : `/api/events?after=${encodeURIComponent(lastId)}`;
    const es = new EventSource(url, { withCredentials: true });
    source = es;
    liveState.value = failures === 0 ? "connecting" : "reconnecting";
    es.onopen = () => {
      failures = 0;
      liveState.value = "live";
    };
    es.onerror = () => {
      liveState.value = "reconnecting";
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries on its own
      es.close();
      void loadSession().then(() => {
        if (stopped || !session.value) return;
        const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
        failures += 1;
        timer = setTimeout(open, wait);
      });
    };
    for (const type of types) es.addEventListener(type, listener);
  };

  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    source?.close();
  };
}
