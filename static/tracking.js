// The tracking page's script (/t/<token>, src/transports/http/tracking-page.ts): reads the job's view
// from /t/<token>/status, then follows /t/<token>/events, drawing each view it gets. Every text is set
// with textContent: nothing from the server is read as HTML.
(() => {
  const base = location.pathname.replace(/\/+$/, "");
  const STEP_NAMES = {
    accepted: "Technician booked",
    en_route: "On the way",
    on_site: "Arrived",
    completed: "Work done",
  };
  const byId = (id) => document.getElementById(id);

  function formatter(zone, withDate) {
    const options = withDate
      ? { weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }
      : { hour: "numeric", minute: "2-digit" };
    try {
      return new Intl.DateTimeFormat(undefined, {
        ...options,
        timeZone: zone ?? undefined,
        timeZoneName: "short",
      });
    } catch {
      return new Intl.DateTimeFormat(undefined, { ...options, timeZoneName: "short" });
    }
  }

  function when(iso, zone) {
    return formatter(zone, true).format(new Date(iso));
  }

  function row(list, label, value) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.textContent = value;
    list.append(dt, dd);
  }

  function render(view) {
    const zone = view.time_zone;
    byId("status").textContent = view.status_text;
    document.body.dataset.stage = view.stage;
    const details = byId("details");
    details.replaceChildren();
    row(details, "Service", view.trade);
    if (view.technician)
      row(details, "Technician", `${view.technician.first_name} (${view.technician.trade})`);
    if (view.eta_at) row(details, "Expected arrival", when(view.eta_at, zone));
    else if (view.arrival_window && view.stage !== "completed" && view.stage !== "cancelled") {
      const end = formatter(zone, false).format(new Date(view.arrival_window.end));
      row(details, "Arrival window", `${when(view.arrival_window.start, zone)} – ${end}`);
    }
    const steps = byId("steps");
    steps.replaceChildren();
    for (const step of view.steps) {
      const li = document.createElement("li");
      li.className = step.done ? "done" : "todo";
      li.dataset.step = step.step;
      const name = document.createElement("span");
      name.textContent = STEP_NAMES[step.step] ?? step.step;
      li.append(name);
      if (step.done && step.at) {
        const time = document.createElement("time");
        time.dateTime = step.at;
        time.textContent = when(step.at, zone);
        li.append(" ", time);
      }
      steps.append(li);
    }
  }

  function gone() {
    byId("status").textContent = "This tracking link has expired or was withdrawn.";
    byId("details").replaceChildren();
    byId("steps").replaceChildren();
    byId("live").textContent = "";
    document.body.dataset.stage = "gone";
  }

  async function load() {
    const response = await fetch(`${base}/status`, { headers: { accept: "application/json" } });
    if (response.status === 404) return gone();
    if (!response.ok) throw new Error(`status ${response.status}`);
    render(await response.json());
    follow();
  }

  function follow() {
    const live = byId("live");
    const source = new EventSource(`${base}/events`);
    source.addEventListener("open", () => {
      live.textContent = "Live: this page updates by itself.";
    });
    source.addEventListener("tracking.status", (event) => render(JSON.parse(event.data)));
    source.addEventListener("stream.closed", () => {
      source.close();
      gone();
    });
    source.addEventListener("error", () => {
      live.textContent = "Reconnecting…";
    });
  }

  load().catch(() => {
    byId("status").textContent = "The status could not be read; reload the page to try again.";
  });
})();
