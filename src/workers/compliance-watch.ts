// The daily compliance list (pool.compliance_expiring): once per UTC day and mode, the active contractors
// that may not be offered work today or whose insurance or license runs out within 45 days, recorded in
// the audit log (GET /api/dispatcher/v1/audit?kind=pool.compliance_expiring) and sent on the dispatch
// team's event stream (GET /api/events), both in the transaction that claims the day. Every process
// checks each COMPLIANCE_WATCH_MS; the store's daily_runs row, written with them, lets one run a day
// record it. Webhooks go to an account's endpoints about its own orders, so a pool-level list has no
// recipient there.

import { sealRecord } from "../audit/record.js";
import { complianceWatchList, dateOfDay, dayOf } from "../domain/compliance.js";
import { POOL_COMPLIANCE_EVENT } from "../domain/pool-events.js";
import type { Services } from "../operations/kernel/operation.js";
import { Periodic } from "./periodic.js";

const COMPLIANCE_WATCH_MS = 15 * 60_000;
const COMPLIANCE_JOB = POOL_COMPLIANCE_EVENT;

export class ComplianceWatch {
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => this.logger?.error({ err }, "compliance list failed"),
  );

  constructor(
    private readonly services: Pick<Services, "store" | "now">,
    private readonly logger?: { error(obj: object, msg: string): void },
  ) {}

  /** Records today's list for each mode not yet recorded today; returns the modes this run recorded. */
  async tick(): Promise<Array<"live" | "sandbox">> {
    const now = this.services.now();
    const today = dayOf(now);
    const day = dateOfDay(today);
    const repo = this.services.store.contractors;
    const recorded: Array<"live" | "sandbox"> = [];
    let all: Awaited<ReturnType<typeof repo.load>> | null = null;
    for (const pool of ["live", "sandbox"] as const) {
      const livemode = pool === "live";
      if (await repo.ranToday(COMPLIANCE_JOB, day, livemode)) continue;
      all ??= await repo.load();
      const members = all.filter((c) => c.pool === pool);
      const list = complianceWatchList(members, today);
      const data = {
        pool,
        day,
        active_contractors: members.filter((c) => c.active && !c.excluded).length,
        not_compliant: list.filter((e) => e.status === "not_compliant").length,
        expiring: list.filter((e) => e.status === "expiring").length,
        contractors: list,
      };
      const record = sealRecord({
        kind: "pool.compliance_expiring",
        at: now.toISOString(),
        accountId: null,
        livemode,
        actor: "system:compliance",
        data,
      });
      const claimed = await this.services.store.write(async (tx) => {
        if (!(await tx.claimDaily(COMPLIANCE_JOB, day, livemode))) return false;
        tx.appendAudit(record);
        tx.appendPoolEvent({
          type: COMPLIANCE_JOB,
          livemode,
          createdAt: now.toISOString(),
          payload: { ...data, seal: record.seal },
        });
        return true;
      });
      if (claimed) recorded.push(pool);
    }
    return recorded;
  }

  start(intervalMs = COMPLIANCE_WATCH_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
