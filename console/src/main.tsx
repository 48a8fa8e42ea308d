// The web console: one application, one sign-in, a view by the kind of the key signed in with.

import { signal } from "@preact/signals";
import { render } from "preact";
import { loadSession, session } from "./api";
import { Shell } from "./shell";
import "./styles.css";
import { EvalsPage } from "./views/evals";
import { SignIn } from "./views/sign-in";

/** The public evals page is #evals, for anyone, signed in or not. */
const route = signal(location.hash);
window.addEventListener("hashchange", () => {
  route.value = location.hash;
});

function App() {
  if (route.value === "#evals") return <EvalsPage />;
  const current = session.value;
  if (current === undefined) return <div class="splash" aria-busy="true" />;
  if (current === null) return <SignIn />;
  return <Shell session={current} />;
}

const root = document.getElementById("app");
if (root) {
  render(<App />, root);
  void loadSession();
}
