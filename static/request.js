// The request form's script (/r/<token>, src/transports/http/request-page.ts): shows the site's name and
// city from /r/<token>/site, then sends the form to /r/<token> as JSON and shows the reference it gets;
// then each photo chosen (up to two) to /r/<token>/photos/<reference>, its bytes as the body.
// Every text is set with textContent: nothing from the server, or typed, is read as HTML.
(() => {
  const base = location.pathname.replace(/\/+$/, "");
  const byId = (id) => document.getElementById(id);

  async function loadSite() {
    try {
      const res = await fetch(`${base}/site`, { credentials: "omit" });
      if (!res.ok) throw new Error(String(res.status));
      const { site } = await res.json();
      byId("site").textContent = `${site.name}, ${site.city}`;
    } catch {
      byId("site").textContent = "This link may no longer work.";
    }
  }

  function problemText(problem, status) {
    if (status === 429) return "Too many reports from here just now; try again in a minute.";
    if (status === 413) return "That is too much text; please shorten it.";
    if (status === 404) return "This link is no longer available; ask the team for the current one.";
    if (problem && Array.isArray(problem.errors)) {
      return problem.errors.map((e) => `${e.field}: ${e.message}`).join("\n");
    }
    return "The report could not be sent; please try again.";
  }

  /** Sends the photos chosen, one at a time; a sentence for those refused (the report itself is in). */
  async function sendPhotos(files, reference) {
    const refused = [];
    for (const file of [...files].slice(0, 2)) {
      const res = await fetch(`${base}/photos/${encodeURIComponent(reference)}`, {
        method: "POST",
        credentials: "omit",
        headers: { "content-type": file.type || "application/octet-stream" },
        body: file,
      }).catch(() => null);
      if (!res?.ok) {
        const why =
          res?.status === 413
            ? "too large"
            : res?.status === 415
              ? "not a JPEG, PNG or WebP photo"
              : "not sent";
        refused.push(`${file.name}: ${why}`);
      }
    }
    if (files.length > 2) refused.push("Only the first two photos were sent.");
    return refused.join("\n");
  }

  async function send(event) {
    event.preventDefault();
    const form = byId("request-form");
    const data = new FormData(form);
    const body = {
      description: String(data.get("description") ?? ""),
      urgency: String(data.get("urgency") ?? "routine"),
      name: String(data.get("name") ?? ""),
      contact: String(data.get("contact") ?? ""),
    };
    byId("error").textContent = "";
    byId("send").disabled = true;
    try {
      const res = await fetch(base, {
        method: "POST",
        credentials: "omit",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await res.json().catch(() => null);
      if (!res.ok) {
        byId("error").textContent = problemText(answer, res.status);
        return;
      }
      const photoNote = await sendPhotos(byId("photos").files ?? [], answer.reference);
      form.hidden = true;
      byId("photo-note").textContent = photoNote;
      byId("done-text").textContent = answer.message;
      byId("reference").textContent = answer.reference;
      byId("done").hidden = false;
    } catch {
      byId("error").textContent = "The report could not be sent; check the connection and try again.";
    } finally {
      byId("send").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    byId("request-form").addEventListener("submit", send);
    void loadSite();
  });
})();
