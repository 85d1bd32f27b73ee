import { ErrorCode, formatScaledDecimal, ServiceError } from "@outcomes/core";
import {
  type BoundedPlayerFigure,
  exceededPlayerBound,
  isDuplicateOutcome,
  isRetryableConflict,
  protectionVerdict,
  refusedStatement,
  type SqlPool,
} from "@outcomes/db";
import { Batcher, metrics } from "@outcomes/runtime";
import { UnusableOutcomeError } from "./outcome-taker.js";
import { protectionRefusal } from "./protection-refusal.js";
import type { SpinPlan } from "./spin-plan.js";
import { committedWrite, type SpinDone, writeSpins } from "./write-spins.js";

/** Runs of one batch when Postgres rolls it back to break a deadlock (each wait is bounded by lock_timeout). */
const CONFLICT_ATTEMPTS = 3;

export interface GroupCommitSettings {
  /** At most this many spins per commit (SPIN_BATCH_MAX_SIZE). */
  maxSize: number;
  /** The longest the first spin of a batch waits for company while another batch commits (SPIN_BATCH_MAX_WAIT_MS). */
  maxWaitMs: number;
  /** MIN_READY_BLOCKS: a spin that starts a block tells whether its game's reserve ran low. */
  minReadyBlocks: number;
}

/** A key's scope as one string: two spins with one key never share a batch. */
const keyOf = ({ key }: SpinPlan) =>
  key ? `${key.scope.partnerId}\n${key.scope.environment}\n${key.scope.key}` : null;

/**
 * The commit stage: group commit. Spins arriving while a batch is gathered commit together
 * (`writeSpins`); with no batch committing, a batch goes at the end of the event loop's turn, with
 * one committing, when that commit ends, `maxWaitMs` after its first spin, or at `maxSize`
 * (`Batcher`). A 200 still means committed: each spin's promise settles after its batch did.
 * Batches are independent and take their row locks in one order. A batch the database refuses is
 * split until the spin that cannot be written is alone (CONTRACT §9: one partner's spin never fails
 * another's); a reused outcome then answers UnusableOutcomeError, so its spin takes the next one.
 * A keyed spin joins a batch with its key: the batch locks the key and reads its record, so a first
 * request that committed meanwhile answers it (`replayed`). Shared state between processes goes
 * through Postgres only (row locks, the unique outcome key).
 */
export class GroupCommit {
  private readonly batcher: Batcher<SpinPlan, SpinDone>;

  constructor(
    private readonly sql: SqlPool,
    private readonly settings: GroupCommitSettings,
  ) {
    this.batcher = new Batcher({
      maxSize: settings.maxSize,
      keyOf,
      gatherWhileRunning: { maxWaitMs: settings.maxWaitMs },
      run: async (plans) => {
        metrics.spinBatchSize.observe(plans.length);
        const stop = metrics.spinBatchSeconds.startTimer();
        try {
          return await this.write(plans);
        } finally {
          stop();
        }
      },
    });
  }

  commit(plan: SpinPlan): Promise<SpinDone> {
    return this.batcher.submit(plan);
  }

  /** After a failure that left no answer (the connection went away): the spin as committed, or null. */
  recorded(plan: SpinPlan): Promise<SpinDone | null> {
    return committedWrite(this.sql, plan);
  }

  private async write(plans: SpinPlan[], attempt = 1): Promise<Array<SpinDone | Error>> {
    try {
      return await writeSpins(this.sql, plans, this.settings.minReadyBlocks);
    } catch (error) {
      // Chosen as a deadlock's victim (a block-boundary batch against a fill, a reveal or another
      // batch): rolled back whole, so the same batch runs again rather than failing its spins.
      if (isRetryableConflict(error) && attempt < CONFLICT_ATTEMPTS) {
        metrics.spinBatchReruns.inc({ reason: "conflict" });
        return this.write(plans, attempt + 1);
      }
      // One row fails the whole statement (a reused outcome, a player past a bound, whatever the
      // reason): the halves run again apart, so the good spins commit and the bad one ends alone,
      // in about 2 × log2(n) statements. A lost connection may hide a commit: never re-run then.
      if (plans.length > 1 && refusedStatement(error)) {
        metrics.spinBatchReruns.inc({ reason: "split" });
        const half = Math.ceil(plans.length / 2);
        const halves = await Promise.all([this.write(plans.slice(0, half)), this.write(plans.slice(half))]);
        return halves.flat();
      }
      const answer = plans.length === 1 ? refusalOf(plans[0]!, error) : (error as Error);
      return plans.map(() => answer);
    }
  }
}

/**
 * Why the database refused a spin alone: its outcome was used already (UnusableOutcomeError: the
 * spin takes the next one), its player's protection refused it (KS-4220..4222, KS-4293), or it would
 * take a player's figure past its bound (KS-4103); any other error as it is.
 */
function refusalOf(plan: SpinPlan, error: unknown): Error {
  if (plan.spin.position !== null && isDuplicateOutcome(error)) {
    return new UnusableOutcomeError("outcome already used", { cause: error });
  }
  const verdict = protectionVerdict(error);
  if (verdict !== null) return protectionRefusal(verdict);
  const figure = exceededPlayerBound(error);
  return figure === null ? (error as Error) : playerBoundError(figure);
}

/**
 * The player's figures are kept exact as JSON numbers (CONTRACT §9): the database refused a spin that
 * would take one past its bound, and nothing was written.
 */
function playerBoundError(figure: BoundedPlayerFigure): ServiceError {
  const most = formatScaledDecimal(Number.MAX_SAFE_INTEGER);
  // A balance may be negative: its range is named both ways, a total's by its upper end.
  const range =
    figure === "totalSpins"
      ? "past 2147483647 spins"
      : figure === "balanceUsd"
        ? `outside -${most}..${most} USD`
        : `past ${most} USD`;
  return new ServiceError(ErrorCode.WagerOutOfRange, {
    message: `Spin refused: it would take the player's ${figure} ${range}, the most it can show exactly; nothing was written`,
    details: [{ path: "wagerUsd", message: `would take the player's ${figure} ${range}` }],
  });
}
