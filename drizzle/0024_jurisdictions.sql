CREATE TABLE "jurisdictions" (
	"code" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"min_round_ms" integer DEFAULT 0 NOT NULL,
	"max_wager_micros" bigint,
	"session_reminder_minutes" integer,
	"built_in" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "jurisdictions_min_round_ms" CHECK ("jurisdictions"."min_round_ms" between 0 and 60000),
	CONSTRAINT "jurisdictions_max_wager" CHECK ("jurisdictions"."max_wager_micros" > 0),
	CONSTRAINT "jurisdictions_reminder" CHECK ("jurisdictions"."session_reminder_minutes" between 1 and 1440)
);
--> statement-breakpoint
CREATE TABLE "player_protections" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"external_id" text NOT NULL,
	"jurisdiction" text,
	"self_excluded_until" timestamp (3) with time zone,
	"self_excluded_until_next" timestamp (3) with time zone,
	"self_excluded_until_next_at" timestamp (3) with time zone,
	"cooling_off_until" timestamp (3) with time zone,
	"cooling_off_until_next" timestamp (3) with time zone,
	"cooling_off_until_next_at" timestamp (3) with time zone,
	"loss_daily_micros" bigint,
	"loss_daily_micros_next" bigint,
	"loss_daily_micros_next_at" timestamp (3) with time zone,
	"loss_weekly_micros" bigint,
	"loss_weekly_micros_next" bigint,
	"loss_weekly_micros_next_at" timestamp (3) with time zone,
	"loss_monthly_micros" bigint,
	"loss_monthly_micros_next" bigint,
	"loss_monthly_micros_next_at" timestamp (3) with time zone,
	"wager_daily_micros" bigint,
	"wager_daily_micros_next" bigint,
	"wager_daily_micros_next_at" timestamp (3) with time zone,
	"wager_weekly_micros" bigint,
	"wager_weekly_micros_next" bigint,
	"wager_weekly_micros_next_at" timestamp (3) with time zone,
	"wager_monthly_micros" bigint,
	"wager_monthly_micros_next" bigint,
	"wager_monthly_micros_next_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "player_protections_partner_id_environment_external_id_pk" PRIMARY KEY("partner_id","environment","external_id")
);
--> statement-breakpoint
CREATE TABLE "spin_refusals" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"day" date NOT NULL,
	"error_code" text NOT NULL,
	"refused" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "spin_refusals_partner_id_environment_day_error_code_pk" PRIMARY KEY("partner_id","environment","day","error_code")
);
--> statement-breakpoint
ALTER TABLE "partners" ADD COLUMN "default_jurisdiction" text DEFAULT 'NONE' NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "day_start" date;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "day_wagered_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "day_lost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "week_start" date;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "week_wagered_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "week_lost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "month_start" date;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "month_wagered_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "month_lost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "session_started_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "session_spins" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "session_net_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD COLUMN "refused_spins" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "player_protections" ADD CONSTRAINT "player_protections_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spin_refusals" ADD CONSTRAINT "spin_refusals_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
INSERT INTO "jurisdictions" ("code", "name", "min_round_ms", "max_wager_micros", "session_reminder_minutes", "built_in") VALUES
	('NONE', 'No jurisdiction rules', 0, NULL, NULL, true),
	('UK-GC', 'Great Britain (UK Gambling Commission RTS)', 2500, NULL, 60, true),
	('DE-GLUSTV', 'Germany (GlüStV 2021 §22a)', 5000, 1000000, NULL, true),
	('ON-AGCO', 'Ontario (AGCO Registrar''s Standards)', 0, NULL, NULL, true)
ON CONFLICT ("code") DO NOTHING;--> statement-breakpoint
-- Raised by the spin statement for a spin its player's protection refuses (CONTRACT §16): the
-- statement fails, nothing of it is written, and the verdict (JSON) comes back as the error's detail.
CREATE OR REPLACE FUNCTION "refuse_spin"(verdict jsonb) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	RAISE EXCEPTION 'spin refused by player protection' USING ERRCODE = 'PP001', DETAIL = verdict::text;
END
$$;
