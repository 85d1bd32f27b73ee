DROP INDEX "spins_partner_env_created_idx";--> statement-breakpoint
ALTER TABLE "settlement_reports" ALTER COLUMN "total_spins" SET DATA TYPE bigint;--> statement-breakpoint
CREATE INDEX "spins_settlement_idx" ON "spins" USING btree ("partner_id","environment","created_at","game_id","wager_micros","payout_micros");