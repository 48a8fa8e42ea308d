// The maintenance plans' generator (issue 34; operations/maintenance/generate.ts): every
// MAINTENANCE_INTERVAL_MS each process generates the occurrences that entered their plan's horizon
// (scheduled orders, each claimed once in its order's transaction, so processes sharing a store never
// create one twice) and settles the occurrences whose window ended (completed, or overdue with its event).

import type { Services } from "../operations/kernel/operation.js";
import { generateDue, settleEnded } from "../operations/maintenance/generate.js";
import { Periodic } from "./periodic.js";

export class MaintenanceGenerator {
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => this.logger?.error({ err }, "maintenance generation failed"),
  );

  constructor(
    private readonly services: Services,
    private readonly logger?: { error(obj: object, msg: string): void },
  ) {}

  /** One round: what it generated, failed to generate, and settled. */
  async tick(): Promise<{ generated: number; failed: number; completed: number; overdue: number }> {
    const generation = await generateDue(this.services);
    const settled = await settleEnded(this.services);
    return { generated: generation.generated, failed: generation.failed, ...settled };
  }

  start(intervalMs: number): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
