-- spins, events and idempotency_keys become range-partitioned by created_at (docs/partitioning.md):
-- spins and idempotency_keys a UTC day per partition, events a UTC month. Each table is renamed, a
-- partitioned table of the same columns (same order) takes its name, partitions are made for the
-- rows' whole range and 7 days ahead, the rows are copied, the keys and indexes are built on the
-- full partitions, and the old table is dropped. drizzle-kit cannot express partitioning, so this
-- migration is written by hand; its snapshot describes the parents as plain tables.
--
-- ensure_time_partitions(parent, unit, from, to) makes the missing partitions named
-- <parent>_pYYYYMMDD (day) or <parent>_pYYYYMM (month) covering [from, to), each created apart
-- and then ATTACHed: attaching takes only a SHARE UPDATE EXCLUSIVE lock on the parent, which
-- reads and inserts do not wait for (CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE).
-- Callers take turns on an advisory lock, so two at once make each partition once. It returns the
-- names it made. The key-expiry role's partitions.maintain job calls it every hour.
CREATE FUNCTION "ensure_time_partitions"(parent regclass, unit text, from_ts timestamptz, to_ts timestamptz)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	lower_bound timestamptz := date_trunc(unit, from_ts, 'UTC');
	upper_bound timestamptz;
	partition_name text;
BEGIN
	IF unit NOT IN ('day', 'month') THEN
		RAISE EXCEPTION 'partition unit must be day or month, not %', unit;
	END IF;
	PERFORM pg_advisory_xact_lock(7283543);
	WHILE lower_bound < to_ts LOOP
		upper_bound := (lower_bound AT TIME ZONE 'UTC' + ('1 ' || unit)::interval) AT TIME ZONE 'UTC';
		partition_name := (SELECT relname FROM pg_class WHERE oid = parent) || '_p'
			|| to_char(lower_bound AT TIME ZONE 'UTC', CASE unit WHEN 'day' THEN 'YYYYMMDD' ELSE 'YYYYMM' END);
		IF to_regclass(quote_ident(partition_name)) IS NULL THEN
			EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', partition_name, parent);
			EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, partition_name,
				to_char(lower_bound AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || '+00',
				to_char(upper_bound AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || '+00');
			RETURN NEXT partition_name;
		END IF;
		lower_bound := upper_bound;
	END LOOP;
END $$;
--> statement-breakpoint
CREATE TABLE "spin_outcomes" (
	"block_id" bigint NOT NULL,
	"outcome_index" integer NOT NULL,
	"spin_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "spin_outcomes_pkey" PRIMARY KEY("block_id","outcome_index")
);
--> statement-breakpoint
ALTER TABLE "spins" RENAME TO "spins_unpartitioned";--> statement-breakpoint
ALTER TABLE "spins_unpartitioned" DROP CONSTRAINT "spins_pkey";--> statement-breakpoint
DROP INDEX "spins_outcome_uq", "spins_player_created_idx", "spins_settlement_idx";--> statement-breakpoint
CREATE TABLE "spins" (
	"id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"game_id" integer NOT NULL,
	"player_id" bigint NOT NULL,
	"block_id" bigint,
	"outcome_index" integer,
	"prize_tier" text NOT NULL,
	"multiplier_millionths" bigint NOT NULL,
	"wager_micros" bigint NOT NULL,
	"payout_micros" bigint NOT NULL,
	"balance_after_micros" bigint NOT NULL,
	"presentation" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"forced" boolean DEFAULT false NOT NULL,
	CONSTRAINT "spins_outcome_or_forced" CHECK (case when "forced" then "block_id" is null and "outcome_index" is null
		else "block_id" is not null and "outcome_index" is not null end)
) PARTITION BY RANGE ("created_at");
--> statement-breakpoint
SELECT ensure_time_partitions('spins', 'day',
	least((SELECT min("created_at") FROM "spins_unpartitioned"), now() - interval '25 hours'),
	greatest((SELECT max("created_at") + interval '1 millisecond' FROM "spins_unpartitioned"), now() + interval '7 days'));
--> statement-breakpoint
INSERT INTO "spins" SELECT * FROM "spins_unpartitioned";--> statement-breakpoint
INSERT INTO "spin_outcomes" ("block_id", "outcome_index", "spin_id", "created_at")
	SELECT "block_id", "outcome_index", "id", "created_at" FROM "spins_unpartitioned" WHERE "block_id" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_pkey" PRIMARY KEY("id","created_at");--> statement-breakpoint
CREATE INDEX "spins_player_created_idx" ON "spins" USING btree ("player_id","created_at");--> statement-breakpoint
CREATE INDEX "spins_settlement_idx" ON "spins" USING btree ("partner_id","environment","created_at","game_id","wager_micros","payout_micros");--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_block_id_blocks_id_fk" FOREIGN KEY ("block_id") REFERENCES "public"."blocks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
DROP TABLE "spins_unpartitioned";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_events_id_fk";--> statement-breakpoint
ALTER TABLE "events" RENAME TO "events_unpartitioned";--> statement-breakpoint
ALTER TABLE "events_unpartitioned" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
DROP INDEX "events_log_type_idx", "events_log_uq", "events_undispatched_idx";--> statement-breakpoint
CREATE TABLE "events" (
	"id" text NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"dispatched_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"sequence" bigint NOT NULL
) PARTITION BY RANGE ("created_at");
--> statement-breakpoint
SELECT ensure_time_partitions('events', 'month',
	least((SELECT min("created_at") FROM "events_unpartitioned"), now() - interval '25 hours'),
	greatest((SELECT max("created_at") + interval '1 millisecond' FROM "events_unpartitioned"), now() + interval '7 days'));
--> statement-breakpoint
INSERT INTO "events" SELECT * FROM "events_unpartitioned";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY("id","created_at");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at is null;--> statement-breakpoint
CREATE INDEX "events_log_idx" ON "events" USING btree ("partner_id","environment","sequence");--> statement-breakpoint
CREATE INDEX "events_log_type_idx" ON "events" USING btree ("partner_id","environment","type","sequence");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "event_created_at" timestamp (3) with time zone;--> statement-breakpoint
UPDATE "webhook_deliveries" d SET "event_created_at" = e."created_at" FROM "events_unpartitioned" e WHERE e."id" = d."event_id";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "event_created_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_fk" FOREIGN KEY ("event_id","event_created_at") REFERENCES "public"."events"("id","created_at") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
DROP TABLE "events_unpartitioned";--> statement-breakpoint
ALTER TABLE "idempotency_keys" RENAME TO "idempotency_keys_unpartitioned";--> statement-breakpoint
ALTER TABLE "idempotency_keys_unpartitioned" DROP CONSTRAINT "idempotency_keys_partner_id_environment_key_pk";--> statement-breakpoint
DROP INDEX "idempotency_keys_created_idx";--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
) PARTITION BY RANGE ("created_at");
--> statement-breakpoint
SELECT ensure_time_partitions('idempotency_keys', 'day',
	least((SELECT min("created_at") FROM "idempotency_keys_unpartitioned"), now() - interval '25 hours'),
	greatest((SELECT max("created_at") + interval '1 millisecond' FROM "idempotency_keys_unpartitioned"), now() + interval '7 days'));
--> statement-breakpoint
INSERT INTO "idempotency_keys" SELECT * FROM "idempotency_keys_unpartitioned";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY("partner_id","environment","key","created_at");--> statement-breakpoint
DROP TABLE "idempotency_keys_unpartitioned";
