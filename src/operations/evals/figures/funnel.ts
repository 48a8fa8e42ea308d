// The offer funnel: what became of the automatic offers made for the window's orders (accepted, declined,
// expired, withdrawn, pending), the first offers' acceptance and the offers per order.

import { ratio, round } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

export function offerFunnel(t: Tally) {
  const made = t.sum("offers_made");
  const accepted = t.sum("offers_accepted");
  const declined = t.sum("offers_declined");
  const expired = t.sum("offers_expired");
  const pending = t.byStatus.offered;
  const offered = t.sum("offered");
  return {
    offers_made: made,
    offers_accepted: accepted,
    offers_declined: declined,
    offers_expired: expired,
    offers_withdrawn: made - accepted - declined - expired - pending,
    offers_pending: pending,
    first_offer_acceptance_rate: ratio(t.sum("first_offer_accepted"), t.sum("first_offer_answered")),
    mean_offers_per_order: {
      value: offered === 0 ? null : round(made / offered, 4),
      sample_size: offered,
      unit: "offers",
    },
  };
}

export function offerFunnelProvenance(t: Tally, p: Entry): Provenance {
  const offered = t.sum("offered");
  return {
    "operations.offer_funnel": p(
      `${ORDERS_SOURCE}: offers_made, offers_declined, offers_expired, accepted_offer_attempt, status`,
      "offers_made = sum(offers_made); offers_accepted = count(accepted_offer_attempt is not null); offers_declined = sum(offers_declined); offers_expired = sum(offers_expired); offers_pending = count(status = offered); offers_withdrawn = the rest",
      offered,
    ),
    "operations.offer_funnel.first_offer_acceptance_rate": p(
      `${ORDERS_SOURCE}: accepted_offer_attempt, offers_declined, offers_expired`,
      "count(accepted_offer_attempt = 1) / count(accepted_offer_attempt = 1 or offers_declined + offers_expired > 0)",
      t.sum("first_offer_answered"),
      "First offers still pending, or withdrawn before an answer, are not in the sample.",
    ),
    "operations.offer_funnel.mean_offers_per_order": p(
      `${ORDERS_SOURCE}: offers_made`,
      "sum(offers_made) / count(offers_made > 0)",
      offered,
    ),
  };
}
