import {
  type Environment,
  type EventEnvelope,
  type EventType,
  newEventEnvelope,
  orderedEnvelope,
} from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Database } from "../client.js";
import { events } from "../schema/events.js";
import { type Queryable, rowsOf, sqlClientOf } from "./sql-client.js";

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

/** A page of the event log as JSON text: each event in documented key order, and the last sequence. */
export interface EventLogPageText {
  /** The events as a JSON array's text. */
  json: string;
  /** The last event's sequence; null for an empty page. */
  lastSequence: number | null;
}

/**
 * The log's page, of every type or of one (`ENVELOPE_TEXT`). Each envelope is written by Postgres in the documented
 * key order (`json_build_object` keeps it; `data` is the stored jsonb as text, which is what parsing
 * and re-serialising it gave): the API sends the text as it is, parsing and building nothing per
 * event. A page of 100 events cost the API about three times a spin before (docs/performance.md).
 */
const ENVELOPE_TEXT = `json_build_object('id', id, 'sequence', sequence, 'type', type,
  'createdAt', payload->'createdAt', 'environment', environment, 'data', payload->'data')::text`;
const PAGE_OF_ANY_TYPE = `
  select ${ENVELOPE_TEXT} as envelope, sequence from events
  where partner_id = $1 and environment = $2 and sequence > $3
  order by sequence limit $4`;
const PAGE_OF_TYPE = `
  select ${ENVELOPE_TEXT} as envelope, sequence from events
  where partner_id = $1 and environment = $2 and sequence > $3 and type = $5
  order by sequence limit $4`;

type PageRow = { envelope: string; sequence: string };

/** A page of the partner's and environment's event log, in ascending sequence, as JSON text. */
export async function eventLogPage(db: Database, query: EventLogQuery): Promise<EventLogPageText> {
  const parameters: Array<string | number> = [query.partnerId, query.environment, query.after, query.limit];
  if (query.type !== undefined) parameters.push(query.type);
  const client = sqlClientOf(db);
  // The statement is chosen in the call itself, so the SQL scan (tests/security) sees fixed text.
  const rows = await (query.type === undefined
    ? client.unsafe<PageRow[]>(PAGE_OF_ANY_TYPE, parameters, { prepare: true })
    : client.unsafe<PageRow[]>(PAGE_OF_TYPE, parameters, { prepare: true }));
  const last = rows.at(-1);
  return { json: `[${rows.map((row) => row.envelope).join(",")}]`, lastSequence: last ? Number(last.sequence) : null };
}
