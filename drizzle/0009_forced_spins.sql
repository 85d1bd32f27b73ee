ALTER TABLE "spins" ALTER COLUMN "block_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ALTER COLUMN "outcome_index" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ADD COLUMN "forced" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "spins" ADD CONSTRAINT "spins_outcome_or_forced" CHECK (case when "spins"."forced" then "spins"."block_id" is null and "spins"."outcome_index" is null
        else "spins"."block_id" is not null and "spins"."outcome_index" is not null end);