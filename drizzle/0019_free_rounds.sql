CREATE TABLE "free_round_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"game_id" integer NOT NULL,
	"wager_micros" bigint NOT NULL,
	"rounds" integer NOT NULL,
	"player_count" integer NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"cancelled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "free_round_players" (
	"grant_id" text NOT NULL,
	"external_player_id" text NOT NULL,
	"rounds" integer NOT NULL,
	"rounds_used" integer DEFAULT 0 NOT NULL,
	"paid_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "free_round_players_pkey" PRIMARY KEY("grant_id","external_player_id"),
	CONSTRAINT "free_round_players_rounds_used" CHECK ("free_round_players"."rounds_used" between 0 and "free_round_players"."rounds")
);
--> statement-breakpoint
CREATE TABLE "free_round_spins" (
	"spin_id" text PRIMARY KEY NOT NULL,
	"grant_id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"game_id" integer NOT NULL,
	"external_player_id" text NOT NULL,
	"wager_micros" bigint NOT NULL,
	"payout_micros" bigint NOT NULL,
	"rounds_left" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "free_round_spins" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "free_round_wager_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ADD COLUMN "free_round_spins" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ADD COLUMN "free_round_wager_micros" numeric DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "free_round_grants" ADD CONSTRAINT "free_round_grants_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "free_round_grants" ADD CONSTRAINT "free_round_grants_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "free_round_players" ADD CONSTRAINT "free_round_players_grant_id_free_round_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."free_round_grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "free_round_grants_owner_idx" ON "free_round_grants" USING btree ("partner_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "free_round_spins_settlement_idx" ON "free_round_spins" USING btree ("partner_id","environment","created_at","game_id","wager_micros");