import { type AnyColumn, eq, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { freeRoundSpins } from "../schema/free-rounds.js";
import { games } from "../schema/games.js";
import { spinHourlyTotals, spinRollupState } from "../schema/spin-rollups.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spins } from "../schema/spins.js";

/**
 * Hourly roll-ups of spins and voids for settlement (docs/settlements.md, "Scale").
 *
 * An hour may be summed once no spin can still appear in it. A spin's `created_at` is the clock at
 * its insert (`clock_timestamp()`), after its transaction got its id, so a spin dated before hour
 * boundary B belongs to a transaction whose id was assigned before B. The seal therefore records,
 * at a moment after B, a fresh transaction id R of its own (larger than every id assigned before
 * it), and sums the hours before B only once the oldest running transaction is past R (snapshot
 * `xmin` > R): from then on no spin dated before B can commit. Nothing is guessed from clocks or
 * timeouts. (A snapshot's `xmax` would not do: it is the last completed id + 1, and a transaction
 * holding a larger id can still be running.)
 */
const SEAL_LOCK = 7_283_542;

export interface RollupCoverage {
  /** Hours in [coveredFrom, sealedUntil) are summed in `spin_hourly_totals`. */
  coveredFrom: Date;
  sealedUntil: Date;
}

export async function rollupCoverage(executor: Executor): Promise<RollupCoverage | null> {
  const [state] = await executor
    .select({ coveredFrom: spinRollupState.coveredFrom, sealedUntil: spinRollupState.sealedUntil })
    .from(spinRollupState)
    .where(eq(spinRollupState.id, 1));
  return state ?? null;
}

export interface SealResult {
  sealedUntil: Date;
  /** Hours summed by this call (0 while waiting for older transactions). */
  sealedHours: number;
}

/**
 * One step of the seal; the settlements role runs it every minute, and any number of copies may
 * (an advisory lock makes them take turns). The first call starts coverage at the current hour:
 * earlier days keep being summed from `spins`. `now` is the database clock unless a test sets it.
 */
export async function sealSpinRollups(db: Database, options: { now?: Date } = {}): Promise<SealResult> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SEAL_LOCK})`);
    // Compiling this small per-hour plan would cost more than running it (as for the reports).
    await tx.execute(sql`set local jit = off`);
    const clock = options.now ? sql`${options.now.toISOString()}::timestamptz` : sql`clock_timestamp()`;
    // The spin insert and its id assignment are microseconds apart; the minute only keeps the hour
    // just ended from being recorded while a spin dated in it is between the two.
    const [moment] = await tx.execute<{ xmin: string; boundary: string }>(sql`
      select pg_snapshot_xmin(pg_current_snapshot())::text as xmin,
        date_trunc('hour', ${clock} - interval '1 minute', 'UTC') as boundary`);
    const boundary = new Date(moment!.boundary);
    const [state] = await tx.select().from(spinRollupState).where(eq(spinRollupState.id, 1));
    if (!state) {
      await tx.insert(spinRollupState).values({ id: 1, coveredFrom: boundary, sealedUntil: boundary });
      return { sealedUntil: boundary, sealedHours: 0 };
    }

    let { sealedUntil, pendingUntil, pendingXmax } = state;
    let sealedHours = 0;
    if (pendingUntil && pendingXmax !== null && BigInt(moment!.xmin) > BigInt(pendingXmax)) {
      await sumHours(tx, sealedUntil, pendingUntil);
      sealedHours = (pendingUntil.getTime() - sealedUntil.getTime()) / 3_600_000;
      sealedUntil = pendingUntil;
      pendingUntil = null;
      pendingXmax = null;
    }
    // A pending seal is kept until it completes: re-recording every minute could wait for ever
    // under steady traffic, where some transaction below the newest id is always running.
    if (!pendingUntil && boundary > sealedUntil) {
      // Taken after the snapshot above, so this transaction's own id never held back its xmin.
      const [own] = await tx.execute<{ xid: string }>(sql`select pg_current_xact_id()::text as xid`);
      pendingUntil = boundary;
      pendingXmax = own!.xid;
    }
    await tx
      .update(spinRollupState)
      .set({ sealedUntil, pendingUntil, pendingXmax, updatedAt: sql`now()` })
      .where(eq(spinRollupState.id, 1));
    return { sealedUntil, sealedHours };
  });
}

/**
 * Sums [from, to) per partner, environment, UTC hour and game: the spins created in each hour (one
 * index range scan of `spins_settlement_idx` per partner and environment: every spin's game is
 * registered to them), the voids made in it (`spin_voids_settlement_idx`), and its free-round spins
 * (`free_round_spins_settlement_idx`), whose wagers the partner paid: they move from the wagered
 * sum to their own. A void's `voided_at`
 * is `clock_timestamp()` read after its transaction got its id, as a spin's `created_at` is, so the
 * seal's reasoning covers voids alike. Sums stay numeric (the columns' type), so no partner's figures
 * can overflow the statement.
 */
async function sumHours(tx: Transaction, from: Date, to: Date): Promise<void> {
  const range = (column: AnyColumn) =>
    sql`${column} >= ${from.toISOString()}::timestamptz and ${column} < ${to.toISOString()}::timestamptz`;
  await tx.execute(sql`
    insert into ${spinHourlyTotals} (partner_id, environment, hour, game_id, total_spins, total_wagered_micros,
      total_paid_micros, voided_spins, voided_wagered_micros, voided_paid_micros, free_round_spins,
      free_round_wager_micros)
    select owner.partner_id, owner.environment, hours.hour, hours.game_id, sum(hours.spins), sum(hours.wagered),
      sum(hours.paid), sum(hours.voided), sum(hours.voided_wagered), sum(hours.voided_paid), sum(hours.free),
      sum(hours.free_wager)
    from (select distinct ${games.partnerId} as partner_id, ${games.environment} as environment from ${games}) owner
    cross join lateral (
      select date_trunc('hour', ${spins.createdAt}, 'UTC') as hour, ${spins.gameId} as game_id, count(*) as spins,
        sum(${spins.wagerMicros}) as wagered, sum(${spins.payoutMicros}) as paid,
        0 as voided, 0 as voided_wagered, 0 as voided_paid, 0 as free, 0 as free_wager
      from ${spins}
      where ${spins.partnerId} = owner.partner_id and ${spins.environment} = owner.environment
        and ${range(spins.createdAt)}
      group by 1, 2
      union all
      select date_trunc('hour', ${spinVoids.voidedAt}, 'UTC'), ${spinVoids.gameId}, 0, 0, 0,
        count(*), sum(${spinVoids.wagerMicros}), sum(${spinVoids.payoutMicros}), 0, 0
      from ${spinVoids}
      where ${spinVoids.partnerId} = owner.partner_id and ${spinVoids.environment} = owner.environment
        and ${range(spinVoids.voidedAt)}
      group by 1, 2
      union all
      select date_trunc('hour', ${freeRoundSpins.createdAt}, 'UTC'), ${freeRoundSpins.gameId}, 0,
        -sum(${freeRoundSpins.wagerMicros}), 0, 0, 0, 0, count(*), sum(${freeRoundSpins.wagerMicros})
      from ${freeRoundSpins}
      where ${freeRoundSpins.partnerId} = owner.partner_id and ${freeRoundSpins.environment} = owner.environment
        and ${range(freeRoundSpins.createdAt)}
      group by 1, 2
    ) hours
    group by owner.partner_id, owner.environment, hours.hour, hours.game_id`);
}

/**
 * Declares [from, to) summed from what `spins` holds now, for data loaded in bulk with nothing
 * writing spins (the benchmark's seed, a restored backup): the seal's proof does not apply there.
 */
export async function backfillSpinRollups(db: Database, from: Date, to: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SEAL_LOCK})`);
    await tx.delete(spinHourlyTotals);
    await sumHours(tx, from, to);
    await tx
      .insert(spinRollupState)
      .values({ id: 1, coveredFrom: from, sealedUntil: to })
      .onConflictDoUpdate({
        target: spinRollupState.id,
        set: { coveredFrom: from, sealedUntil: to, pendingUntil: null, pendingXmax: null, updatedAt: sql`now()` },
      });
  });
}
