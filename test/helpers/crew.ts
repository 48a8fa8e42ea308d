// The cast of the proof-of-work tests: a harness's live pool of two plumbers, the account that orders
// (acme), another account (globex), the dispatch team, and a contractor key for each plumber (the first is
// the best rated, so it is offered the jobs; the second is the "other contractor" of the refusals).

import { expect } from "vitest";
import { liveContractor, testRecord } from "./fixtures.js";
import { type Harness, ORDER_PATH } from "./harness.js";

export interface Crew {
  caller: string;
  otherAccount: string;
  dispatcher: string;
  /** The best-rated plumber's key: the one offered the jobs. */
  holderKey: string;
  otherContractorKey: string;
  contractorIds: [string, string];
}

export async function crewOf(h: Harness, options: { maxActiveJobs?: number } = {}): Promise<Crew> {
  const tag = () => Math.random().toString(36).slice(2, 8);
  const ids: [string, string] = [`ctr_a${tag()}`, `ctr_b${tag()}`];
  await h.services.store.contractors.insert(
    ids.map((id, i) => liveContractor({ id, rating: 4.9 - i, maxActiveJobs: options.maxActiveJobs ?? 10 })),
    testRecord(),
  );
  await h.services.pool.load();
  const keyOf = async (contractorId: string) =>
    (
      await h.services.keys.issue({
        accountName: "crew",
        mode: "live",
        actor: "operator:test",
        kind: "contractor",
        contractorId,
      })
    ).key;
  return {
    caller: await h.key("acme", "live"),
    otherAccount: await h.key("globex", "live"),
    dispatcher: await h.dispatcherKey("live"),
    holderKey: await keyOf(ids[0]),
    otherContractorKey: await keyOf(ids[1]),
    contractorIds: ids,
  };
}

/** Places `job` with `caller`'s key and has `contractorKey`'s contractor accept its offer; the order id. */
export async function acceptedJob(
  h: Harness,
  caller: string,
  contractorKey: string,
  job: Record<string, unknown>,
): Promise<string> {
  const res = await h.post(ORDER_PATH, job, { "x-api-key": caller });
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().order_id as string;
  const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": contractorKey })).json().offers;
  const offer = offers.find((o: { order_id: string }) => o.order_id === id);
  expect(offer, `no offer of ${id} to the contractor`).toBeDefined();
  const accepted = await h.post(
    "/api/contractor/v1/offers/accept",
    { offer_id: offer.offer_id },
    { "x-api-key": contractorKey },
  );
  expect(accepted.statusCode, accepted.body).toBe(200);
  return id;
}
