CREATE TABLE "webhook_recoveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"since" timestamp (3) with time zone NOT NULL,
	"counted" integer NOT NULL,
	"redelivered" integer DEFAULT 0 NOT NULL,
	"cursor_created_at" timestamp (3) with time zone,
	"cursor_id" text,
	"status" text DEFAULT 'running' NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_recoveries" ADD CONSTRAINT "webhook_recoveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_recoveries_running_idx" ON "webhook_recoveries" USING btree ("webhook_id") WHERE status = 'running';
