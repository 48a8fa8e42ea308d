// The signed-in frame: the header (who, which mode, whether live) and the view of the key's kind.

import { useEffect, useState } from "preact/hooks";
import { signOut } from "./api";
import { liveState } from "./live";
import type { Session } from "./types";
import { AccountView } from "./views/account";
import { Board } from "./views/board";
import { ContractorView } from "./views/contractor";
import { Pool } from "./views/pool";
import { Webhooks } from "./views/webhooks";

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
          <DispatchTeam />
        ) : session.kind === "contractor" ? (
          <ContractorView />
        ) : (
          <AccountArea />
        )}
      </main>
    </div>
  );
}

/** The dispatch team's two views: the board (kept open, and live, while the pool is shown) and the pool. */
function DispatchTeam() {
  const [tab, setTab] = useState<"board" | "pool">("board");
  return (
    <>
      <nav class="tabs" aria-label="Dispatch team views">
        <button
          type="button"
          class={`tab ${tab === "board" ? "tab-on" : ""}`}
          aria-pressed={tab === "board"}
          onClick={() => setTab("board")}
        >
          Board
        </button>
        <button
          type="button"
          class={`tab ${tab === "pool" ? "tab-on" : ""}`}
          aria-pressed={tab === "pool"}
          onClick={() => setTab("pool")}
        >
          Pool
        </button>
      </nav>
      <div hidden={tab !== "board"}>
        <Board />
      </div>
      {tab === "pool" && <Pool />}
    </>
  );
}

/** The account's two views: its orders (kept open, and live, while webhooks are shown) and its webhooks. */
function AccountArea() {
  const [tab, setTab] = useState<"orders" | "webhooks">("orders");
  return (
    <>
      <nav class="tabs" aria-label="Account views">
        <button
          type="button"
          class={`tab ${tab === "orders" ? "tab-on" : ""}`}
          aria-pressed={tab === "orders"}
          onClick={() => setTab("orders")}
        >
          Orders
        </button>
        <button
          type="button"
          class={`tab ${tab === "webhooks" ? "tab-on" : ""}`}
          aria-pressed={tab === "webhooks"}
          onClick={() => setTab("webhooks")}
        >
          Webhooks
        </button>
      </nav>
      <div hidden={tab !== "orders"}>
        <AccountView />
      </div>
      {tab === "webhooks" && <Webhooks />}
    </>
  );
}
