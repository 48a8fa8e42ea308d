// The sign-in form: one API key, exchanged once for the session cookie; the key is not kept anywhere.

import { useState } from "preact/hooks";
import { ApiProblem, signIn } from "../api";

export function SignIn() {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(key.trim());
      setKey("");
    } catch (err) {
      setError(err instanceof ApiProblem ? err.message : "The service could not be reached.");
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="signin-page">
      <form class="signin card" method="post" action="/console/session" onSubmit={submit}>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true">
            fd
          </span>
          <span class="brand-name">field-dispatch</span>
        </div>
        <h1>Sign in to the console</h1>
        <p class="muted">
          Use the API key you were given: a dispatch-team key opens the board, a contractor key your offers
          and jobs, an account key your orders.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api_key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="fsd_live_… or fsd_test_…"
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>
          Sign in
        </button>
        <p class="fine">The key is exchanged once for a session cookie and is not stored in this browser.</p>
        <p class="signin-links">
          <a href="#evals">Public evals</a>: how dispatch performs, no key needed.
        </p>
      </form>
    </div>
  );
}
