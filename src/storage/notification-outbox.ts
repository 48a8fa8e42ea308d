// The notifications' outbox row (migration 0044), written by the order writer (order-writer.ts) in the
// transaction of the change it reports.

import { type Kysely, sql, type Transaction } from "kysely";
import type { Database, NotificationEventsTable } from "./schema.js";

/**
 * Writes the outbox row of a notifiable change, in its transaction, only when somebody may receive it: the
 * order names a site with a contact's email, or its account has opted-in people. One statement, no read.
 */
export async function enqueueNotification(
  trx: Transaction<Database> | Kysely<Database>,
  row: Omit<NotificationEventsTable, "fanned_out">,
): Promise<void> {
  await sql`insert into notification_events (id, account_id, livemode, order_id, event, created_at, fanned_out)
    select ${row.id}, ${row.account_id}, cast(${row.livemode} as integer), ${row.order_id}, ${row.event},
      ${row.created_at}, 0
    where exists (select 1 from order_sites os join sites s on s.id = os.site_id
                  where os.order_id = ${row.order_id} and s.contact_email is not null)
       or exists (select 1 from notification_subscribers
                  where account_id = ${row.account_id} and livemode = cast(${row.livemode} as integer))`.execute(
    trx,
  );
}
