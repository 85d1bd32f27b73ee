-- Exact settlement figures at any size, provisional reports, and a per-partner spin ceiling
-- (issues 33 and 37; docs/settlements.md, RELEASES.md). Expand only: release 2 reads and writes both
-- tables as before.
--
-- A report's amounts become numeric, as the roll-ups they add up already are (0012): a partner-day
-- past 2^63 micro-USD must still be stored. Release 2 reads them as it read bigint (postgres.js hands
-- both over as text) and writes JS numbers into them. One ALTER TABLE, so the table (one row per
-- partner, environment and day, read by nothing on the spin path) is rewritten once; the
-- statements below run under the same lock, briefly holding back reads of reports.
ALTER TABLE "settlement_reports"
  ALTER COLUMN "total_wagered_micros" SET DATA TYPE numeric,
  ALTER COLUMN "total_paid_micros" SET DATA TYPE numeric,
  ALTER COLUMN "voided_wagered_micros" SET DATA TYPE numeric,
  ALTER COLUMN "voided_paid_micros" SET DATA TYPE numeric,
  ALTER COLUMN "free_round_wager_micros" SET DATA TYPE numeric,
  -- Null in the rows release 2 writes: provisional then means "computed before the day ended".
  ADD COLUMN "provisional" boolean;--> statement-breakpoint
-- The rows so far get that answer stored, so the index below holds only the few reports a run may
-- still have to make final (and those release 2 writes during the rollout).
UPDATE "settlement_reports"
  SET "provisional" = "generated_at" < (("report_date" + 1)::timestamp AT TIME ZONE 'UTC');--> statement-breakpoint
CREATE INDEX "settlement_reports_provisional_idx" ON "settlement_reports" USING btree ("report_date")
  WHERE "settlement_reports"."provisional" is not false;--> statement-breakpoint
-- Nullable, no default: a catalog change only (null: the default ceiling, 1,000,000 USD).
ALTER TABLE "partners" ADD COLUMN "spin_ceiling_micros" bigint;
