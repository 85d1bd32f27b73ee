import {
  couldBeId,
  type Environment,
  ErrorCode,
  newId,
  type ParSheetAnalysis,
  type ParSheetStatus,
  ServiceError,
} from "@outcomes/core";
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { parSheets } from "../schema/par-sheets.js";
import type { PageWindow } from "./paging.js";
import type { SqlClient } from "./sql-client.js";

export type ParSheetRecord = typeof parSheets.$inferSelect;

/** The partner and environment a sheet belongs to; other ones' sheets do not exist for it. */
export interface SheetOwner {
  partnerId: string;
  environment: Environment;
}

/**
 * Stores a checked sheet with the document exactly as uploaded (the raw JSON text into a `json`
 * column). Sandbox sheets are ACTIVE at once; production ones wait for an operator.
 */
export async function insertParSheet(
  db: Executor,
  owner: SheetOwner,
  sheet: ParSheetAnalysis,
  rawDocument: string,
): Promise<ParSheetRecord> {
  const [record] = await db
    .insert(parSheets)
    .values({
      id: newId("par"),
      ...owner,
      name: sheet.document.name,
      version: sheet.document.version,
      status: owner.environment === "sandbox" ? "ACTIVE" : "PENDING_APPROVAL",
      drawMode: sheet.drawMode,
      document: sql`${rawDocument}::json`,
      rtp: sheet.rtpDecimal,
      certifiedRtp: sheet.certifiedRtpDecimal,
      hitFrequency: sheet.hitFrequency,
      volatility: sheet.volatility,
    })
    .returning();
  if (!record) throw new Error("PAR sheet insert returned no row");
  return record;
}

export async function listParSheets(
  db: Database,
  owner: SheetOwner,
  page: PageWindow,
): Promise<{ rows: ParSheetRecord[]; total: number }> {
  const mine = and(eq(parSheets.partnerId, owner.partnerId), eq(parSheets.environment, owner.environment));
  const [rows, [totals]] = await Promise.all([
    db
      .select()
      .from(parSheets)
      .where(mine)
      .orderBy(desc(parSheets.createdAt), desc(parSheets.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(parSheets).where(mine),
  ]);
  return { rows, total: totals?.total ?? 0 };
}

/** Every partner's sheets, newest first, narrowed by any of the filters (operators' review queue). */
export async function listParSheetsForOperator(
  db: Database,
  filter: {
    partnerId?: string | undefined;
    environment?: Environment | undefined;
    status?: ParSheetStatus | undefined;
  },
  page: PageWindow,
): Promise<{ rows: ParSheetRecord[]; total: number }> {
  const where = and(
    filter.partnerId !== undefined ? eq(parSheets.partnerId, filter.partnerId) : undefined,
    filter.environment !== undefined ? eq(parSheets.environment, filter.environment) : undefined,
    filter.status !== undefined ? eq(parSheets.status, filter.status) : undefined,
  );
  const [rows, [totals]] = await Promise.all([
    db
      .select()
      .from(parSheets)
      .where(where)
      .orderBy(desc(parSheets.createdAt), desc(parSheets.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(parSheets).where(where),
  ]);
  return { rows, total: totals?.total ?? 0 };
}

/** The owner's sheet, or 404 KS-4205 (unknown, another partner's, another environment's). */
export async function requireOwnParSheet(db: Executor, owner: SheetOwner, id: string): Promise<ParSheetRecord> {
  if (!couldBeId(id)) throw new ServiceError(ErrorCode.ParSheetNotFound);
  const [record] = await db
    .select()
    .from(parSheets)
    .where(
      and(eq(parSheets.id, id), eq(parSheets.partnerId, owner.partnerId), eq(parSheets.environment, owner.environment)),
    )
    .limit(1);
  if (!record) throw new ServiceError(ErrorCode.ParSheetNotFound);
  return record;
}

/**
 * Operator decisions. Approve: PENDING_APPROVAL → ACTIVE (approving an ACTIVE sheet changes
 * nothing; a RETIRED sheet stays retired: 400 KS-4208). Retire: any → RETIRED, once; games
 * already registered from it keep running, new registrations are refused (KS-4208).
 */
export async function decideParSheet(
  db: Database,
  id: string,
  decision: "approve" | "retire",
): Promise<ParSheetRecord> {
  if (!couldBeId(id)) throw new ServiceError(ErrorCode.ParSheetNotFound);
  return db.transaction(async (tx) => {
    const [record] = await tx.select().from(parSheets).where(eq(parSheets.id, id)).for("update").limit(1);
    if (!record) throw new ServiceError(ErrorCode.ParSheetNotFound);
    if (decision === "approve") {
      if (record.status === "RETIRED") {
        throw new ServiceError(ErrorCode.ParSheetNotActive, {
          message: "PAR sheet is retired; a retired sheet cannot be approved",
        });
      }
      if (record.status === "ACTIVE") return record;
      return updated(tx, id, { status: "ACTIVE", approvedAt: new Date() });
    }
    if (record.status === "RETIRED") return record;
    return updated(tx, id, { status: "RETIRED", retiredAt: new Date() });
  });
}

async function updated(
  tx: Executor,
  id: string,
  values: Partial<Pick<ParSheetRecord, "status" | "approvedAt" | "retiredAt">>,
): Promise<ParSheetRecord> {
  const [record] = await tx.update(parSheets).set(values).where(eq(parSheets.id, id)).returning();
  if (!record) throw new ServiceError(ErrorCode.ParSheetNotFound);
  return record;
}

const SHEET_DOCUMENT = "select document from par_sheets where id = $1";

/**
 * The sheet's document as uploaded (it never changes), undefined when there is no such sheet. Read
 * on `client`, prepared: the spin path's forced outcomes read it inside a keyed spin's transaction.
 */
export async function parSheetDocument(client: SqlClient, parSheetId: string): Promise<unknown> {
  const [row] = await client.unsafe<{ document: unknown }[]>(SHEET_DOCUMENT, [parSheetId], { prepare: true });
  return row?.document;
}
