ALTER TABLE "webhooks" ADD COLUMN "previous_secret" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "previous_secret_expires_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_redelivery_idx" ON "webhook_deliveries" USING btree ("redelivery_of") WHERE redelivery_of is not null;