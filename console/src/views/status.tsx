// The status pill every view shows.

import { STATUS_LABEL } from "../format";
import type { OrderStatus } from "../types";

export function StatusPill({ status }: { status: OrderStatus }) {
  return <span class={`pill st-${status}`}>{STATUS_LABEL[status]}</span>;
}
