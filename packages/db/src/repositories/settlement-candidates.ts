import { type Environment, utcDayBounds } from "@outcomes/core";
import { and, asc, eq, lt, ne, or, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { games } from "../schema/games.js";
import { partners } from "../schema/partners.js";
import { settlementReports } from "../schema/settlement-reports.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spins } from "../schema/spins.js";

/** KS-4214's test: does the partner have any game registered in this environment? */
export async function partnerHasGames(db: Executor, partnerId: string, environment: Environment): Promise<boolean> {
  const [row] = await db
    .select({ id: games.id })
    .from(games)
    .where(and(eq(games.partnerId, partnerId), eq(games.environment, environment)))
    .limit(1);
  return row !== undefined;
}

/**
 * Who gets a report for a day: every partner and environment with a game registered before the day
 * ended. A deactivated partner still gets one for a day it had spins or voids on (the money must
 * settle), but not an empty one every day for ever.
 */
export async function settlementCandidates(
  db: Executor,
  reportDate: string,
  filter: { partnerId?: string | undefined; environment?: Environment | undefined } = {},
): Promise<Array<{ partnerId: string; environment: Environment }>> {
  const { start, end } = utcDayBounds(reportDate);
  const hadActivity = sql`(exists (select 1 from ${spins} where ${spins.partnerId} = ${games.partnerId}
    and ${spins.environment} = ${games.environment}
    and ${spins.createdAt} >= ${start.toISOString()}::timestamptz
    and ${spins.createdAt} < ${end.toISOString()}::timestamptz)
    or exists (select 1 from ${spinVoids} where ${spinVoids.partnerId} = ${games.partnerId}
    and ${spinVoids.environment} = ${games.environment}
    and ${spinVoids.voidedAt} >= ${start.toISOString()}::timestamptz
    and ${spinVoids.voidedAt} < ${end.toISOString()}::timestamptz))`;
  return db
    .selectDistinct({ partnerId: games.partnerId, environment: games.environment })
    .from(games)
    .innerJoin(partners, eq(partners.id, games.partnerId))
    .where(
      and(
        lt(games.createdAt, end),
        filter.partnerId ? eq(games.partnerId, filter.partnerId) : undefined,
        filter.environment ? eq(games.environment, filter.environment) : undefined,
        or(eq(partners.isActive, true), hadActivity),
      ),
    )
    .orderBy(asc(games.partnerId), asc(games.environment));
}

/** How many overdue provisional reports one run makes final at most (the next run takes the rest). */
const OVERDUE_PER_RUN = 1000;

/**
 * Reports still provisional although their day ended before `today` (UTC, `YYYY-MM-DD`), other than
 * `except`'s day, oldest first: a run makes each final. They are few: a transaction from before
 * midnight that held a run back past its retries, or a day release 2's worker settled during a
 * rollout (it leaves a provisional flag as it found it). A row release 2 wrote has no flag: it is
 * provisional when computed before its day ended (`isProvisionalReport`).
 */
export async function overdueProvisionalReports(
  db: Executor,
  today: string,
  except: string,
  filter: { partnerId?: string | undefined; environment?: Environment | undefined } = {},
): Promise<Array<{ partnerId: string; environment: Environment; reportDate: string }>> {
  const dayEnd = sql`((${settlementReports.reportDate} + 1)::timestamp at time zone 'UTC')`;
  return db
    .select({
      partnerId: settlementReports.partnerId,
      environment: settlementReports.environment,
      reportDate: settlementReports.reportDate,
    })
    .from(settlementReports)
    .where(
      and(
        sql`${settlementReports.provisional} is not false`,
        or(eq(settlementReports.provisional, true), sql`${settlementReports.generatedAt} < ${dayEnd}`),
        lt(settlementReports.reportDate, today),
        ne(settlementReports.reportDate, except),
        filter.partnerId ? eq(settlementReports.partnerId, filter.partnerId) : undefined,
        filter.environment ? eq(settlementReports.environment, filter.environment) : undefined,
      ),
    )
    .orderBy(asc(settlementReports.reportDate))
    .limit(OVERDUE_PER_RUN);
}
