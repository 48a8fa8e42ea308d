// The web console: one application, one sign-in, a view by the kind of the key signed in with.

import { render } from "preact";
import { loadSession, session } from "./api";
import { Shell } from "./shell";
import "./styles.css";
import { SignIn } from "./views/sign-in";

function App() {
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
