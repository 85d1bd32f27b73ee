CREATE TABLE "spin_hourly_totals" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"game_id" integer NOT NULL,
	"total_spins" bigint NOT NULL,
	"total_wagered_micros" bigint NOT NULL,
	"total_paid_micros" bigint NOT NULL,
	CONSTRAINT "spin_hourly_totals_partner_id_environment_hour_game_id_pk" PRIMARY KEY("partner_id","environment","hour","game_id")
);
--> statement-breakpoint
CREATE TABLE "spin_rollup_state" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"covered_from" timestamp (3) with time zone NOT NULL,
	"sealed_until" timestamp (3) with time zone NOT NULL,
	"pending_until" timestamp (3) with time zone,
	"pending_xmax" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "spin_rollup_state_single_row" CHECK ("spin_rollup_state"."id" = 1)
);
