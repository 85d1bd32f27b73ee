import { usdToMicros } from "@outcomes/core";
import { bullPrefix, keyServers, redisKeys } from "@outcomes/queue";
import type { Sql } from "postgres";
import { checkKeyedSpins, checkLedger, checkOutcomes, contiguous } from "../../faults/harness/invariants.js";
import type { Received } from "../../faults/harness/receiver.js";
import type { Deployment } from "./deployment.js";
import type { ReplayReport, RollingLoad } from "./load.js";

// Each check returns what it found wrong as sentences (empty: nothing) and the figures it counted,
// so the same checks make the upgrade test pass and the test of the test see what broke.

export interface Finding {
  violations: string[];
  figures: Record<string, unknown>;
}

const LIST_LIMIT = 5;
const some = (items: unknown[]) =>
  `${JSON.stringify(items.slice(0, LIST_LIMIT))}${items.length > LIST_LIMIT ? ` (+${items.length - LIST_LIMIT})` : ""}`;

/**
 * Every request answered: a 200, or a 503 KS-4203 that says when to come back (an outcome list
 * being refilled); nothing else, no failed connection (a refused one was sent on by the balancer),
 * no request without an answer in time.
 */
export function checkAnswers(load: RollingLoad): Finding {
  const bad = load.records.filter(
    (record) => record.status !== 200 && !(record.status === 503 && record.code === "KS-4203" && record.retryAfter),
  );
  const slowestMs = load.records.reduce((max, record) => Math.max(max, (record.answeredAt ?? 0) - record.sentAt), 0);
  const figures = { requests: load.records.length, answers: load.summary(), resent: load.resends(), slowestMs };
  if (bad.length === 0) return { violations: [], figures };
  const kinds = new Map<string, number>();
  for (const record of bad) {
    const kind = `${record.status} ${record.code ?? record.networkError ?? ""} ${record.servedBy ?? ""}`.trim();
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return {
    violations: [
      `${bad.length} spin requests not answered 200 or 503 KS-4203: ${JSON.stringify(Object.fromEntries(kinds))}`,
    ],
    figures,
  };
}

/**
 * Every keyed spin replayed with exactly its first answer, on whichever release it was sent to.
 * Its figures count the replays by route ("old→new" while both run, …), to be summed.
 */
export function checkReplays(what: string, report: ReplayReport): Finding {
  const mismatches = report.mismatches;
  return {
    violations:
      mismatches.length > 0 ? [`${what}: ${mismatches.length} keyed spins did not replay: ${some(mismatches)}`] : [],
    figures: {
      replays: Object.fromEntries(Object.entries(report.across).map(([route, n]) => [`${route} ${what}`, n])),
    },
  };
}

/**
 * The ledger and the outcomes, from Postgres and from what clients saw: every spin a client saw is
 * stored as seen; no outcome is used twice (in `spins`, in `spin_outcomes`, in the answers of
 * either release); each player's balance and totals are the sums of its spins; every key answers
 * with exactly one spin; every large win has its one event; event sequences are gap-free.
 */
export async function checkSpins(sql: Sql, partnerId: string, load: RollingLoad): Promise<Finding> {
  const violations: string[] = [];
  const ledger = await checkLedger(sql, partnerId, load.accepted());
  if (ledger.missing.length > 0) violations.push(`spins answered 200 but not stored: ${some(ledger.missing)}`);
  if (ledger.mismatched.length > 0)
    violations.push(`spins stored with another player or wager: ${some(ledger.mismatched)}`);
  if (ledger.unacknowledged > 0) violations.push(`${ledger.unacknowledged} spins stored that no client saw succeed`);
  if (ledger.duplicateOutcomes > 0) violations.push(`${ledger.duplicateOutcomes} outcomes used by two spins`);
  if (ledger.balanceMismatches.length > 0) {
    violations.push(`balances or totals that are not the sums of their spins: ${some(ledger.balanceMismatches)}`);
  }

  const stored = new Map(
    (
      await sql<{ id: string; block: string | null; index: number | null; tier: string; payout: string }[]>`
        select id, block_id::text as block, outcome_index as index, prize_tier as tier, payout_micros::text as payout
        from spins where partner_id = ${partnerId}`
    ).map((row) => [row.id, row]),
  );
  const servedAs = new Map<string, string>();
  const twice: string[] = [];
  const misreported: string[] = [];
  const results = load.results();
  for (const { result } of results) {
    const row = stored.get(result.spinId);
    const position = result.fairness ? `${result.fairness.blockId}:${result.fairness.index}` : null;
    if (position) {
      const other = servedAs.get(position);
      if (other !== undefined && other !== result.spinId) twice.push(`${position} as ${other} and ${result.spinId}`);
      servedAs.set(position, result.spinId);
    }
    if (
      row &&
      (`${row.block}:${row.index}` !== (position ?? "null:null") ||
        row.tier !== result.outcome.prizeTier ||
        Number(row.payout) !== usdToMicros(result.outcome.payoutUsd))
    ) {
      misreported.push(result.spinId);
    }
  }
  if (twice.length > 0) violations.push(`outcomes answered to two spins: ${some(twice)}`);
  if (misreported.length > 0) violations.push(`spins answered with another outcome than stored: ${some(misreported)}`);

  const [outcomeRows] = await sql<{ unrecorded: number; orphaned: number }[]>`
    select
      (select count(*)::int from spins s where not s.forced and not exists (
        select 1 from spin_outcomes o
        where o.block_id = s.block_id and o.outcome_index = s.outcome_index and o.spin_id = s.id)) as unrecorded,
      (select count(*)::int from spin_outcomes o where not exists (select 1 from spins s where s.id = o.spin_id)) as orphaned`;
  if (outcomeRows!.unrecorded > 0) violations.push(`${outcomeRows!.unrecorded} spins without their spin_outcomes row`);
  if (outcomeRows!.orphaned > 0) violations.push(`${outcomeRows!.orphaned} spin_outcomes rows without their spin`);

  const keys = await checkKeyedSpins(sql, partnerId);
  const keyedClients = load.records.some((record) => record.idempotencyKey);
  if (keyedClients && keys.spinsOfSeveralKeys > 0)
    violations.push(`${keys.spinsOfSeveralKeys} spins answer several keys`);

  const largeWins = await sql<{ id: string; events: number }[]>`
    select s.id, count(e.id)::int as events
    from spins s join games g on g.id = s.game_id
    left join events e on e.partner_id = s.partner_id and e.type = 'spin.large_win' and e.payload->'data'->>'spinId' = s.id
    where s.partner_id = ${partnerId}
      and s.payout_micros >= coalesce(g.large_win_threshold_micros, ${usdToMicros(1000)!})
    group by s.id`;
  const unannounced = largeWins.filter((row) => row.events !== 1);
  if (unannounced.length > 0)
    violations.push(`large wins without exactly one spin.large_win event: ${some(unannounced)}`);

  const sequences = await sql<{ sequence: string }[]>`
    select sequence from events where partner_id = ${partnerId} order by sequence`;
  const misplaced = sequences.flatMap((row, position) =>
    Number(row.sequence) === position + 1 ? [] : [`#${position + 1}: ${row.sequence}`],
  );
  if (misplaced.length > 0) violations.push(`event sequences not 1..n, each once: ${some(misplaced)}`);

  return {
    violations,
    figures: {
      spinsStored: ledger.spinsInPostgres,
      spinsSeen: ledger.acceptedByClients,
      outcomesCheckedAgainstAnswers: servedAs.size,
      playersChecked: ledger.playersChecked,
      keys: keys.keys,
      largeWins: largeWins.length,
      events: sequences.length,
    },
  };
}

/**
 * The game's outcome list once the load has stopped and generation has caught up: sealed blocks
 * gap-free and all loaded; each unused outcome queued once, nothing foreign, nothing used, nothing
 * lost (no process was killed, so no outcome may be stranded).
 */
export async function checkQueue(deployment: Deployment, gameId: number): Promise<Finding> {
  const outcomes = await checkOutcomes(deployment.sql, deployment.redis, deployment.redisPrefix, gameId).catch(
    (error: Error) => error,
  );
  if (outcomes instanceof Error) {
    const stranded = await strandedByCount(deployment, gameId);
    return {
      violations: [
        `the outcome list holds items this tree cannot read (${outcomes.message})`,
        ...(stranded > 0 ? [`${stranded} outcomes neither queued nor used (stranded), by count`] : []),
      ],
      figures: { stranded },
    };
  }
  const violations: string[] = [];
  if (!contiguous(outcomes.sequences)) violations.push(`block sequences not 1..n: ${some(outcomes.sequences)}`);
  if (outcomes.loadedThrough !== outcomes.blocks) {
    violations.push(`blocks loaded through ${outcomes.loadedThrough} of ${outcomes.blocks}`);
  }
  for (const [name, count] of [
    ["queued twice", outcomes.duplicateQueued],
    ["queued but naming no sealed outcome", outcomes.foreignQueued],
    ["queued but already used", outcomes.queuedButSpent],
    ["neither queued nor used (stranded)", outcomes.stranded],
  ] as const) {
    if (count > 0) violations.push(`${count} outcomes ${name}`);
  }
  const { sequences: _, ...figures } = outcomes;
  return { violations, figures };
}

/** Outcomes of the loaded blocks minus those used and the list's length: what no list item stands for. */
async function strandedByCount(deployment: Deployment, gameId: number): Promise<number> {
  const [game] = await deployment.sql<{ partnerId: string; environment: string }[]>`
    select partner_id as "partnerId", environment from games where id = ${gameId}`;
  const keys = redisKeys(deployment.redisPrefix);
  const owner = { id: gameId, ...game! } as Parameters<typeof keys.outcomeQueue>[0];
  const loadedThrough = Number((await deployment.redis.get(keys.outcomesLoadedThrough(owner))) ?? 0);
  const queued = await deployment.redis.llen(keys.outcomeQueue(owner));
  const [loaded] = await deployment.sql<{ outcomes: number; used: number }[]>`
    select coalesce(sum(b.size), 0)::int as outcomes,
      (select count(*)::int from spin_outcomes o join blocks u on u.id = o.block_id
        where u.game_id = ${gameId} and u.sequence <= ${loadedThrough}) as used
    from blocks b where b.game_id = ${gameId} and b.sequence <= ${loadedThrough}`;
  return loaded!.outcomes - loaded!.used - queued;
}

/**
 * Every event of the webhook's types made a delivery, and the receiver got each delivery (and so
 * each event) exactly once, successfully.
 */
export async function checkWebhooks(
  sql: Sql,
  partnerId: string,
  webhookId: string,
  received: Received[],
): Promise<Finding> {
  const rows = await sql<{ event: string; type: string; delivery: string | null; status: string | null }[]>`
    select e.id as event, e.type, d.id as delivery, d.status
    from events e join webhooks w on w.id = ${webhookId} and e.type = any(w.events)
    left join webhook_deliveries d on d.event_id = e.id and d.webhook_id = w.id and d.redelivery_of is null
    where e.partner_id = ${partnerId} and e.created_at >= w.created_at`;
  const violations: string[] = [];
  const undelivered = rows.filter((row) => row.status !== "succeeded");
  if (undelivered.length > 0) violations.push(`events not delivered: ${some(undelivered)}`);
  const byDelivery = countBy(received.map((request) => request.deliveryId));
  const byEvent = countBy(received.map((request) => String(request.body?.id)));
  const repeated = [...byDelivery].filter(([, count]) => count > 1);
  if (repeated.length > 0) violations.push(`deliveries received more than once: ${some(repeated)}`);
  const repeatedEvents = [...byEvent].filter(([, count]) => count > 1);
  if (repeatedEvents.length > 0) violations.push(`events received more than once: ${some(repeatedEvents)}`);
  const known = new Set(rows.map((row) => row.delivery));
  const unknown = [...byDelivery.keys()].filter((id) => !known.has(id));
  if (unknown.length > 0) violations.push(`received deliveries of no event of the webhook: ${some(unknown)}`);
  const missing = rows.filter((row) => row.delivery && !byDelivery.has(row.delivery));
  if (missing.length > 0) violations.push(`deliveries the receiver never got: ${some(missing)}`);
  return {
    violations,
    figures: {
      events: rows.length,
      received: received.length,
      byType: Object.fromEntries(countBy(rows.map((row) => row.type))),
    },
  };
}

/** No BullMQ job failed (a release taking a job it cannot read fails it). */
export async function checkFailedJobs(deployment: Deployment): Promise<Finding> {
  const failed: Record<string, number> = {};
  const reasons: string[] = [];
  for (const server of keyServers(deployment.redis)) {
    let cursor = "0";
    do {
      const [next, keys] = await server.scan(
        cursor,
        "MATCH",
        `${bullPrefix(deployment.redisPrefix)}:*:failed`,
        "COUNT",
        1000,
      );
      cursor = next;
      for (const key of keys) {
        const ids = await server.zrange(key, "0", "-1");
        if (ids.length === 0) continue;
        const queue = key.slice(0, -":failed".length);
        failed[queue] = ids.length;
        for (const id of ids.slice(0, 2)) reasons.push(`${id}: ${await server.hget(`${queue}:${id}`, "failedReason")}`);
      }
    } while (cursor !== "0");
  }
  const count = Object.values(failed).reduce((sum, n) => sum + n, 0);
  return {
    violations: count > 0 ? [`${count} failed jobs ${JSON.stringify(failed)}: ${some(reasons)}`] : [],
    figures: { failedJobs: count },
  };
}

/** No process of either release logged an error or died of one (counted by process and message). */
export function checkLogs(deployment: Deployment): Finding {
  const errors = [...deployment.logLinesWith('"level":50'), ...deployment.logLinesWith('"level":60')];
  const kinds = countBy(errors.map(errorKind));
  return {
    violations: errors.length > 0 ? [`${errors.length} error lines in the processes' logs: ${some([...kinds])}`] : [],
    figures: { errorLines: errors.length },
  };
}

/** `process: msg (err.message)` of a pino line as `logLinesWith` names it. */
function errorKind(line: string): string {
  const at = line.indexOf(": ");
  try {
    const entry = JSON.parse(line.slice(at + 2)) as {
      msg?: string;
      err?: { message?: string; cause?: { message?: string } };
    };
    // A failed query's message is its SQL and parameters: its cause says what went wrong.
    const reason = entry.err?.cause?.message ?? entry.err?.message;
    return `${line.slice(0, at)}: ${entry.msg}${reason ? ` (${reason.split("\n")[0]!.slice(0, 160)})` : ""}`;
  } catch {
    return line.slice(0, 200);
  }
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
