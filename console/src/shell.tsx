// The signed-in frame: the header (who, which mode, whether live) and the view of the key's kind.

import { useEffect } from "preact/hooks";
import { signOut } from "./api";
import { liveState } from "./live";
import type { Session } from "./types";
import { AccountView } from "./views/account";
import { Board } from "./views/board";
import { ContractorView } from "./views/contractor";

const ROLE: Record<Session["kind"], string> = {
  dispatcher: "Dispatch team",
  contractor: "Contractor",
  account: "Account",
};

export function Shell({ session }: { session: Session }) {
  useEffect(() => {
    document.title = `${ROLE[session.kind]} · field-dispatch`;
  }, [session.kind]);
  const state = liveState.value;
  return (
    <div class={`shell kind-${session.kind}`}>
      <header class="topbar">
        <div class="brand">
          <span class="logo" aria-hidden="true">
            fd
          </span>
          <span class="brand-name">field-dispatch</span>
        </div>
        <div class="who">
          <span class="role">{ROLE[session.kind]}</span>
          <span class={`mode ${session.livemode ? "mode-live" : "mode-test"}`}>
            {session.livemode ? "Live" : "Sandbox"}
          </span>
          <span class={`live-dot live-${state}`} title={`Updates: ${state}`}>
            <span class="sr-only">Updates: </span>
            {state === "live" ? "Live" : state === "connecting" ? "Connecting" : "Reconnecting"}
          </span>
        </div>
        <button type="button" class="btn btn-quiet" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main class="content">
        {session.kind === "dispatcher" ? (
          <Board />
        ) : session.kind === "contractor" ? (
          <ContractorView />
        ) : (
          <AccountView />
        )}
      </main>
    </div>
  );
}
