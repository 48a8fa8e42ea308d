// The account's notifications (issue 35): the messages its orders' changes sent to the people at its
// sites (or kept, with no SMTP server configured: what would have been sent), newest first; one opens to
// its plain-text part and its attempts.

import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { ApiProblem, get } from "../api";
import { ago, minute } from "../format";

interface NotificationRow {
  notification_id: string;
  order_id: string;
  event: string;
  recipient: string;
  status: string;
  subject: string;
  created_at: string;
}

interface NotificationDetail extends NotificationRow {
  text: string;
  attempts_log: Array<{ attempt: number; outcome: string; error: string | null; started_at: string }>;
}

const rows = signal<NotificationRow[]>([]);
const opened = signal<NotificationDetail | null>(null);
const failure = signal<string | null>(null);
const REFRESH_MS = 15_000;

async function load(): Promise<void> {
  try {
    const page = await get<{ notifications: NotificationRow[] }>("/api/dispatch/v1/notifications", {
      limit: 20,
    });
    rows.value = page.notifications;
    failure.value = null;
  } catch (err) {
    failure.value = err instanceof ApiProblem ? err.message : "The messages could not be loaded.";
  }
}

async function openOne(id: string): Promise<void> {
  try {
    opened.value = await get<NotificationDetail>(`/api/dispatch/v1/notifications/${encodeURIComponent(id)}`);
  } catch (err) {
    failure.value = err instanceof ApiProblem ? err.message : "The message could not be loaded.";
  }
}

function Message({ n }: { n: NotificationDetail }) {
  return (
    <article class="notification-body" aria-label={`Message: ${n.subject}`}>
      <h3>{n.subject}</h3>
      <p class="muted">
        To {n.recipient} · {n.status}
      </p>
      <pre>{n.text}</pre>
      <ul class="attempts">
        {n.attempts_log.map((a) => (
          <li key={a.attempt}>
            Attempt {a.attempt}: {a.outcome}
            {a.error ? ` (${a.error})` : ""}
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => (opened.value = null)}>
        Close
      </button>
    </article>
  );
}

export function NotificationsPanel() {
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      clearInterval(timer);
      opened.value = null;
    };
  }, []);
  const at = minute.value;
  return (
    <section class="notifications" aria-labelledby="notifications-title">
      <h2 id="notifications-title">Messages to the people at your sites</h2>
      {failure.value && (
        <p class="error" role="alert">
          {failure.value}
        </p>
      )}
      {rows.value.length === 0 ? (
        <p class="empty">
          No message yet. Booked, on the way, arrived, completed, rescheduled and cancelled show here.
        </p>
      ) : (
        <table class="notification-rows">
          <thead>
            <tr>
              <th class="nt-cell" scope="col">
                Event
              </th>
              <th class="nt-cell" scope="col">
                To
              </th>
              <th class="nt-cell" scope="col">
                Status
              </th>
              <th class="nt-cell" scope="col">
                When
              </th>
              <th class="nt-cell" scope="col">
                <span class="sr-only">Open</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.value.map((n) => (
              <tr key={n.notification_id} data-notification-id={n.notification_id} data-status={n.status}>
                <td class="nt-cell">{n.event.replace("_", " ")}</td>
                <td class="nt-cell">{n.recipient}</td>
                <td class="nt-cell">{n.status}</td>
                <td class="nt-cell">
                  <time dateTime={n.created_at}>{ago(n.created_at, at)}</time>
                </td>
                <td class="nt-cell">
                  <button type="button" onClick={() => void openOne(n.notification_id)}>
                    Read
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {opened.value && <Message n={opened.value} />}
    </section>
  );
}
