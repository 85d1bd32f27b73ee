-- Expand only: nullable columns, and one with a constant default (catalogue changes, no rewrite);
-- release 2 never names them and keeps reading is_active as before (docs/webhooks.md, "Endpoint health").
ALTER TABLE "webhooks" ADD COLUMN "disabled_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "failing_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "failed_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "rate_limit_per_second" integer;
