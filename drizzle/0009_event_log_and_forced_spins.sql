CREATE TABLE "event_sequences" (
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"last_sequence" bigint NOT NULL,
	CONSTRAINT "event_sequences_partner_id_environment_pk" PRIMARY KEY("partner_id","environment")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "sequence" bigint;--> statement-breakpoint
-- Existing events are numbered per partner and environment in the order they were created, and
-- their stored webhook body gains the field; each counter starts after its last one.
UPDATE "events" e SET "sequence" = n."sequence", "payload" = e."payload" || jsonb_build_object('sequence', n."sequence")
FROM (
	SELECT "id", row_number() OVER (PARTITION BY "partner_id", "environment" ORDER BY "created_at", "id") AS "sequence"
	FROM "events"
) n
WHERE e."id" = n."id";--> statement-breakpoint
INSERT INTO "event_sequences" ("partner_id", "environment", "last_sequence")
SELECT "partner_id", "environment", max("sequence") FROM "events" GROUP BY "partner_id", "environment";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "sequence" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "events_log_uq" ON "events" USING btree ("partner_id","environment","sequence");--> statement-breakpoint
CREATE INDEX "events_log_type_idx" ON "events" USING btree ("partner_id","environment","type","sequence");
--> statement-breakpoint
ALTER TABLE "spins" ALTER COLUMN "block_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ALTER COLUMN "outcome_index" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ADD COLUMN "forced" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_outcome_or_forced" CHECK (case when "spins"."forced" then "spins"."block_id" is null and "spins"."outcome_index" is null
        else "spins"."block_id" is not null and "spins"."outcome_index" is not null end);