CREATE TABLE "api_key_expiry_notices" (
	"api_key_id" text NOT NULL,
	"days_before_expiry" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_key_expiry_notices_api_key_id_days_before_expiry_pk" PRIMARY KEY("api_key_id","days_before_expiry")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"rotated_to_key_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "blocks" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "blocks_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"game_id" integer NOT NULL,
	"sequence" integer NOT NULL,
	"cycle" integer DEFAULT 0 NOT NULL,
	"size" integer NOT NULL,
	"entries" text NOT NULL,
	"commitment" text NOT NULL,
	"status" text DEFAULT 'ready' NOT NULL,
	"started_at" timestamp (3) with time zone,
	"exhausted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"dispatched_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "games" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "games_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"par_sheet_id" text NOT NULL,
	"name" text NOT NULL,
	"min_wager_micros" bigint,
	"max_wager_micros" bigint NOT NULL,
	"large_win_threshold_micros" bigint,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_partner_id_environment_key_pk" PRIMARY KEY("partner_id","environment","key")
);
--> statement-breakpoint
CREATE TABLE "par_sheets" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"status" text NOT NULL,
	"draw_mode" text NOT NULL,
	"document" json NOT NULL,
	"rtp" text NOT NULL,
	"certified_rtp" text NOT NULL,
	"hit_frequency" double precision NOT NULL,
	"volatility" double precision NOT NULL,
	"approved_at" timestamp (3) with time zone,
	"retired_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" text PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"contact_email" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "partners_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "players" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "players_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"external_id" text NOT NULL,
	"balance_micros" bigint DEFAULT 0 NOT NULL,
	"total_spins" integer DEFAULT 0 NOT NULL,
	"total_wagered_micros" bigint DEFAULT 0 NOT NULL,
	"total_paid_micros" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settlement_reports" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"report_date" date NOT NULL,
	"status" text NOT NULL,
	"total_spins" integer NOT NULL,
	"total_wagered_micros" bigint NOT NULL,
	"total_paid_micros" bigint NOT NULL,
	"games" jsonb NOT NULL,
	"generated_at" timestamp (3) with time zone NOT NULL,
	"acknowledged_at" timestamp (3) with time zone,
	"disputed_at" timestamp (3) with time zone,
	"dispute_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "spins" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"game_id" integer NOT NULL,
	"player_id" bigint NOT NULL,
	"block_id" bigint NOT NULL,
	"outcome_index" integer NOT NULL,
	"prize_tier" text NOT NULL,
	"multiplier_millionths" bigint NOT NULL,
	"wager_micros" bigint NOT NULL,
	"payout_micros" bigint NOT NULL,
	"balance_after_micros" bigint NOT NULL,
	"presentation" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 5 NOT NULL,
	"last_response_status" integer,
	"last_error" text,
	"next_attempt_at" timestamp (3) with time zone,
	"redelivery_of" text,
	"completed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"secret" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_key_expiry_notices" ADD CONSTRAINT "api_key_expiry_notices_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "blocks" ADD CONSTRAINT "blocks_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "games" ADD CONSTRAINT "games_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "games" ADD CONSTRAINT "games_par_sheet_id_par_sheets_id_fk" FOREIGN KEY ("par_sheet_id") REFERENCES "public"."par_sheets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "par_sheets" ADD CONSTRAINT "par_sheets_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "players" ADD CONSTRAINT "players_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "settlement_reports" ADD CONSTRAINT "settlement_reports_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_block_id_blocks_id_fk" FOREIGN KEY ("block_id") REFERENCES "public"."blocks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_partner_idx" ON "api_keys" USING btree ("partner_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "blocks_game_sequence_uq" ON "blocks" USING btree ("game_id","sequence");--> statement-breakpoint
CREATE INDEX "blocks_game_status_idx" ON "blocks" USING btree ("game_id","status");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at is null;--> statement-breakpoint
CREATE UNIQUE INDEX "games_partner_env_name_uq" ON "games" USING btree ("partner_id","environment","name");--> statement-breakpoint
CREATE INDEX "par_sheets_partner_idx" ON "par_sheets" USING btree ("partner_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "players_partner_env_external_uq" ON "players" USING btree ("partner_id","environment","external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "settlement_reports_partner_env_date_uq" ON "settlement_reports" USING btree ("partner_id","environment","report_date");--> statement-breakpoint
CREATE UNIQUE INDEX "spins_outcome_uq" ON "spins" USING btree ("block_id","outcome_index");--> statement-breakpoint
CREATE INDEX "spins_player_created_idx" ON "spins" USING btree ("player_id","created_at");--> statement-breakpoint
CREATE INDEX "spins_partner_env_created_idx" ON "spins" USING btree ("partner_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_fanout_uq" ON "webhook_deliveries" USING btree ("webhook_id","event_id") WHERE redelivery_of is null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_created_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhooks_partner_idx" ON "webhooks" USING btree ("partner_id","environment");