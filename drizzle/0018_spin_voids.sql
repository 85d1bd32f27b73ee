CREATE TABLE "spin_voids" (
	"spin_id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"game_id" integer NOT NULL,
	"player_id" bigint NOT NULL,
	"spin_created_at" timestamp (3) with time zone NOT NULL,
	"block_id" bigint,
	"outcome_index" integer,
	"prize_tier" text NOT NULL,
	"wager_micros" bigint NOT NULL,
	"payout_micros" bigint NOT NULL,
	"reason" text NOT NULL,
	"voided_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "voided_spins" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "voided_wagered_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "voided_paid_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ADD COLUMN "voided_spins" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ADD COLUMN "voided_wagered_micros" numeric DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ADD COLUMN "voided_paid_micros" numeric DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "spin_voids_settlement_idx" ON "spin_voids" USING btree ("partner_id","environment","voided_at","game_id","wager_micros","payout_micros");--> statement-breakpoint
CREATE INDEX "spin_voids_block_idx" ON "spin_voids" USING btree ("block_id","outcome_index");--> statement-breakpoint
CREATE INDEX "spin_voids_player_idx" ON "spin_voids" USING btree ("player_id");