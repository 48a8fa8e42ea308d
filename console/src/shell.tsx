// The signed-in frame: the header (who, which mode, whether live) and the view of the key's kind.

import { useEffect, useState } from "preact/hooks";
import { signOut } from "./api";
import { liveState } from "./live";
import type { MapViewProps } from "./map/map-view";
import type { Session } from "./types";
import { AccountView, accountOrders, openOrderTimeline } from "./views/account";
import { Board, boardOrders, openOrder } from "./views/board";
import { ContractorView } from "./views/contractor";
import { AccountDoNotDispatch, DispatcherDoNotDispatch } from "./views/do-not-dispatch";
import { AccountInvoices } from "./views/invoices";
import { Pool } from "./views/pool";
import { RequestsView } from "./views/requests";
import { Schedule } from "./views/schedule";
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

type DispatchTab = "board" | "schedule" | "pool" | "dnd" | "map";
type AccountTab = "orders" | "requests" | "sites" | "plans" | "invoices" | "dnd" | "webhooks" | "map";

function Tabs<T extends string>(props: {
  label: string;
  tabs: Array<[T, string]>;
  tab: T;
  onTab: (tab: T) => void;
}) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map(([id, name]) => (
        <button
          key={id}
          type="button"
          class={`tab ${props.tab === id ? "tab-on" : ""}`}
          aria-pressed={props.tab === id}
          onClick={() => props.onTab(id)}
        >
          {name}
        </button>
      ))}
    </nav>
  );
}

/** Brings an order's row (not its point on the map) into view once the list is shown again. */
function scrollToRow(orderId: string) {
  requestAnimationFrame(() => {
    document.querySelector(`li[data-order-id="${CSS.escape(orderId)}"]`)?.scrollIntoView({ block: "center" });
  });
}

/**
 * The dispatch team's views: the board (kept open, and live, while another is shown: the schedule's queue
 * reads it), the schedule, the pool and the map (of the board's orders). A point clicked on the map opens its order on the board.
 */
function DispatchTeam() {
  const [tab, setTab] = useState<DispatchTab>("board");
  return (
    <>
      <Tabs
        label="Dispatch team views"
        tabs={[
          ["board", "Board"],
          ["schedule", "Schedule"],
          ["pool", "Pool"],
          ["dnd", "Do not dispatch"],
          ["map", "Map"],
        ]}
        tab={tab}
        onTab={setTab}
      />
      <div hidden={tab !== "board"}>
        <Board />
      </div>
      {tab === "schedule" && (
        <Schedule
          onOpenOrder={(id) => {
            openOrder(id);
            setTab("board");
            scrollToRow(id);
          }}
        />
      )}
      {tab === "pool" && <Pool />}
      {tab === "dnd" && <DispatcherDoNotDispatch />}
      {tab === "map" && (
        <LazyMap
          title="Map of orders and contractors"
          orders={boardOrders}
          withContractors
          onOpenOrder={(id) => {
            openOrder(id);
            setTab("board");
            scrollToRow(id);
          }}
        />
      )}
    </>
  );
}

/** The account's views: its orders (kept open, and live, while another is shown: the invoices read their
 * statuses from it), the requests its sites' people report, its sites and their assets, its maintenance plans, its invoices, its webhooks and the map of its orders. A point clicked on the map opens the order's timeline in the list. */
function AccountArea() {
  const [tab, setTab] = useState<AccountTab>("orders");
  /** An order named by the sites' history or the plans' calendar: opened in the list. */
  const showOrder = (id: string) => {
    openOrderTimeline(id);
    setTab("orders");
    scrollToRow(id);
  };
  return (
    <>
      <Tabs
        label="Account views"
        tabs={[
          ["orders", "Orders"],
          ["requests", "Requests"],
          ["sites", "Sites"],
          ["plans", "Plans"],
          ["invoices", "Invoices"],
          ["dnd", "Do not dispatch"],
          ["webhooks", "Webhooks"],
          ["map", "Map"],
        ]}
        tab={tab}
        onTab={setTab}
      />
      <div hidden={tab !== "orders"}>
        <AccountView />
      </div>
      {tab === "requests" && <RequestsView />}
      {tab === "sites" && <LazyAccountView view="sites" onOpenOrder={showOrder} />}
      {tab === "plans" && <LazyAccountView view="plans" onOpenOrder={showOrder} />}
      {tab === "invoices" && <AccountInvoices />}
      {tab === "dnd" && <AccountDoNotDispatch />}
      {tab === "webhooks" && <Webhooks />}
      {tab === "map" && (
        <LazyMap
          title="Map of my orders"
          orders={accountOrders}
          withContractors={false}
          onOpenOrder={showOrder}
        />
      )}
    </>
  );
}

type MapViewComponent = (props: MapViewProps) => preact.JSX.Element;
let mapView: Promise<MapViewComponent> | null = null;

/** The map, its code and its shapes fetched the first time it is shown (a chunk of their own: the board's
 * JavaScript stays small). */
function LazyMap(props: MapViewProps) {
  const [View, setView] = useState<MapViewComponent | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    mapView ??= import("./map/map-view").then((m) => m.MapView);
    mapView.then(
      (v) => live && setView(() => v),
      () => {
        mapView = null;
        if (live) setFailed(true);
      },
    );
    return () => {
      live = false;
    };
  }, []);
  if (View) return <View {...props} />;
  return failed ? (
    <p class="error" role="alert">
      The map could not be loaded; reload the page to try again.
    </p>
  ) : (
    <p class="muted">Loading the map…</p>
  );
}

type AccountViewComponent = (props: { onOpenOrder: (orderId: string) => void }) => preact.JSX.Element;
const accountViews: Record<"sites" | "plans", Promise<AccountViewComponent> | null> = {
  sites: null,
  plans: null,
};
const LOAD_ACCOUNT_VIEW = {
  sites: () => import("./views/sites").then((m) => m.SitesView),
  plans: () => import("./views/plans").then((m) => m.PlansView),
};

/** The account's Sites and Plans, each a chunk of its own fetched the first time it is shown (the orders'
 * and the board's JavaScript stay as small as they were). */
function LazyAccountView(props: { view: "sites" | "plans"; onOpenOrder: (orderId: string) => void }) {
  const { view } = props;
  const [View, setView] = useState<AccountViewComponent | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    setView(null);
    const loading = accountViews[view] ?? LOAD_ACCOUNT_VIEW[view]();
    accountViews[view] = loading;
    loading.then(
      (v) => live && setView(() => v),
      () => {
        accountViews[view] = null;
        if (live) setFailed(true);
      },
    );
    return () => {
      live = false;
    };
  }, [view]);
  if (View) return <View onOpenOrder={props.onOpenOrder} />;
  return failed ? (
    <p class="error" role="alert">
      This view could not be loaded; reload the page to try again.
    </p>
  ) : (
    <p class="muted">Loading…</p>
  );
}
