import { couldBeId, ErrorCode, newId, type PartnerInput, partnerInputProblems, ServiceError } from "@outcomes/core";
import { count, desc, eq } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { partners } from "../schema/partners.js";
import type { Paged, PageWindow } from "./paging.js";
import { isUniqueViolation } from "./pg-errors.js";

export type PartnerRecord = typeof partners.$inferSelect;

/** Creates an active partner. Bad input KS-4101, slug taken 409 KS-4211, anything else KS-5007. */
export async function createPartner(db: Database, input: PartnerInput): Promise<PartnerRecord> {
  const problems = partnerInputProblems(input);
  if (problems.length > 0) throw new ServiceError(ErrorCode.InvalidRequest, { details: problems });
  try {
    const [created] = await db
      .insert(partners)
      .values({
        id: newId("ptr"),
        slug: input.slug,
        name: input.name.trim(),
        contactEmail: input.contactEmail ?? null,
      })
      .returning();
    return created!;
  } catch (error) {
    // The unique index decides, so two concurrent creates of one slug give one partner and one 409.
    if (isUniqueViolation(error))
      throw new ServiceError(ErrorCode.PartnerSlugTaken, { details: [{ path: "slug", message: "taken" }] });
    throw new ServiceError(ErrorCode.PartnerCreationFailed, { cause: error });
  }
}

/** Newest first (ids are time-ordered, so they break ties in creation time). */
export async function listPartners(db: Database, page: PageWindow): Promise<Paged<PartnerRecord>> {
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(partners)
      .orderBy(desc(partners.createdAt), desc(partners.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(partners),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/**
 * The partner or 404 KS-4209. `lock: "share"` holds the row against a concurrent deactivation until
 * the caller's transaction ends (a key issued in it can never belong to a partner deactivated before).
 */
export async function requirePartner(db: Executor, partnerId: string, lock?: "share"): Promise<PartnerRecord> {
  if (!couldBeId(partnerId)) throw new ServiceError(ErrorCode.PartnerNotFound);
  const query = db.select().from(partners).where(eq(partners.id, partnerId));
  const [partner] = lock ? await query.for(lock) : await query;
  if (!partner) throw new ServiceError(ErrorCode.PartnerNotFound);
  return partner;
}

/** Deactivates or re-activates; repeating either is harmless. Unknown partner 404 KS-4209. */
export async function setPartnerActive(db: Database, partnerId: string, isActive: boolean): Promise<PartnerRecord> {
  if (!couldBeId(partnerId)) throw new ServiceError(ErrorCode.PartnerNotFound);
  const [updated] = await db.update(partners).set({ isActive }).where(eq(partners.id, partnerId)).returning();
  if (!updated) throw new ServiceError(ErrorCode.PartnerNotFound);
  return updated;
}

/** Operator settings of a partner; only the fields given change. Unknown partner 404 KS-4209. */
export interface PartnerSettings {
  /** The spin ceiling in micro-USD; null restores the default. */
  spinCeilingMicros?: number | null;
  /** The jurisdiction profile of the partner's players without one of their own (an existing code). */
  defaultJurisdiction?: string;
}

/**
 * Applies operator settings. A lower spin ceiling binds games registered or re-bounded from now on:
 * existing games keep their maxWagerUsd (a spin is never refused for a setting its game predates).
 */
export async function updatePartnerSettings(
  db: Database,
  partnerId: string,
  settings: PartnerSettings,
): Promise<PartnerRecord> {
  const partner = await requirePartner(db, partnerId);
  if (settings.spinCeilingMicros === undefined && settings.defaultJurisdiction === undefined) return partner;
  const [updated] = await db
    .update(partners)
    .set({ spinCeilingMicros: settings.spinCeilingMicros, defaultJurisdiction: settings.defaultJurisdiction })
    .where(eq(partners.id, partnerId))
    .returning();
  if (!updated) throw new ServiceError(ErrorCode.PartnerNotFound);
  return updated;
}
