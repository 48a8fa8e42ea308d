// The live event stream (GET /api/events, Server-Sent Events): one EventSource for the signed-in session,
// sent with its cookie (same origin). The browser reconnects on its own with Last-Event-ID; when the
// session has ended the stream is refused and closed, and the console checks the session.

import { signal } from "@preact/signals";
import { loadSession } from "./api";
import type { StreamEvent } from "./types";

const EVENT_TYPES = [
  "order.offered",
  "order.accepted",
  "order.en_route",
  "order.on_site",
  "order.completed",
  "order.invoiced",
  "order.needs_dispatcher",
  "order.cancelled",
  "order.cannot_complete",
  "order.nte_requested",
  "order.nte_approved",
  "order.nte_rejected",
];

export type LiveState = "connecting" | "live" | "reconnecting";
export const liveState = signal<LiveState>("connecting");

/** Opens the stream; `onEvent` hears every event; the function returned closes it. */
export function subscribe(onEvent: (event: StreamEvent) => void): () => void {
  const source = new EventSource("/api/events", { withCredentials: true });
  liveState.value = "connecting";
  source.onopen = () => {
    liveState.value = "live";
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      liveState.value = "reconnecting";
      void loadSession();
    } else {
      liveState.value = "reconnecting";
    }
  };
  const listener = (e: MessageEvent<string>) => {
    try {
      onEvent(JSON.parse(e.data) as StreamEvent);
    } catch {
      // A line the console cannot read is skipped; the next list load shows the truth.
    }
  };
  for (const type of EVENT_TYPES) source.addEventListener(type, listener);
  return () => source.close();
}
