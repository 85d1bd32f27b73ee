import {
  type Environment,
  type EventEnvelope,
  type EventType,
  newEventEnvelope,
  orderedEnvelope,
} from "@outcomes/core";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { events } from "../schema/events.js";
import { preparedPerHandle } from "./prepared.js";
import { type Queryable, rowsOf } from "./sql-client.js";

export interface NewEvent<D = unknown> {
  partnerId: string;
  environment: Environment;
  type: EventType;
  data: D;
  now?: Date;
}

/**
 * Stores events in the outbox and the event log, numbering each in its partner's and environment's
 * sequence. Call it inside the transaction of the events' cause (a spin, a report, a notice) so an
 * event exists exactly when its cause does, and as that transaction's **last** statement that takes
 * a lock: it takes each (partner, environment) counter row of `event_sequences` (in key order, so
 * two transactions cannot deadlock on them) and holds it until commit. The next transaction of that
 * partner and environment waits for the commit before it numbers its own events, so events commit
 * in sequence order and a reader paging by sequence never sees a smaller one appear later. One call
 * per transaction: all of its events take each counter once. `notifyEvents(producers)` after commit
 * only shortens the webhook worker's wait.
 */
export async function insertEvents(
  executor: Queryable,
  inputs: readonly NewEvent[],
): Promise<EventEnvelope<unknown>[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((input, n) => {
    const envelope = newEventEnvelope(input.type, input.environment, input.data, input.now);
    return { n, partner_id: input.partnerId, environment: input.environment, type: input.type, envelope };
  });
  const numbered = await rowsOf<{ id: string; sequence: string }>(
    executor,
    sql`
    with input as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json)
        as x(n int, partner_id text, environment text, type text, envelope jsonb)
    ),
    counter as (
      insert into event_sequences (partner_id, environment, last_sequence)
      select partner_id, environment, count(*) from input
      group by partner_id, environment order by partner_id, environment
      on conflict (partner_id, environment)
        do update set last_sequence = event_sequences.last_sequence + excluded.last_sequence
      returning partner_id, environment, last_sequence
    ),
    placed as (
      select i.*, c.last_sequence - count(*) over same + row_number() over (same order by i.n) as sequence
      from input i join counter c on c.partner_id = i.partner_id and c.environment = i.environment
      window same as (partition by i.partner_id, i.environment)
    )
    insert into ${events} (id, partner_id, environment, type, sequence, payload, created_at)
    select envelope->>'id', partner_id, environment, type, sequence,
      envelope || jsonb_build_object('sequence', sequence), (envelope->>'createdAt')::timestamptz
    from placed order by n
    returning id, sequence`,
  );
  const sequences = new Map(numbered.map((row) => [row.id, Number(row.sequence)]));
  return rows.map(({ envelope }) => orderedEnvelope({ ...envelope, sequence: sequences.get(envelope.id) as number }));
}

/** One event (see `insertEvents`). */
export async function insertEvent<D>(executor: Queryable, input: NewEvent<D>): Promise<EventEnvelope<D>> {
  const [envelope] = await insertEvents(executor, [input]);
  return envelope as EventEnvelope<D>;
}

export interface EventLogQuery {
  partnerId: string;
  environment: Environment;
  /** Events after this sequence (0: from the start). */
  after: number;
  limit: number;
  type?: EventType;
}

/** The log's page, of every type or of one (`type` is then a placeholder too). */
const eventLogPage = (ofType: boolean) =>
  preparedPerHandle((db) =>
    db
      .select({ payload: events.payload })
      .from(events)
      .where(
        and(
          eq(events.partnerId, sql.placeholder("partnerId")),
          eq(events.environment, sql.placeholder("environment")),
          ofType ? eq(events.type, sql.placeholder("type")) : undefined,
          gt(events.sequence, sql.placeholder("after")),
        ),
      )
      .orderBy(asc(events.sequence))
      .limit(sql.placeholder("limit"))
      .prepare(ofType ? "event_log_page_of_type" : "event_log_page"),
  );
const eventLogPageOfAnyType = eventLogPage(false);
const eventLogPageOfType = eventLogPage(true);

/** A page of the partner's and environment's event log, in ascending sequence. */
export async function listEvents(db: Executor, query: EventLogQuery): Promise<EventEnvelope[]> {
  const page = query.type === undefined ? eventLogPageOfAnyType(db) : eventLogPageOfType(db);
  const rows = await page.execute({ ...query });
  return rows.map((row) => row.payload as EventEnvelope);
}
