-- Expand only: a nullable column with no default (a catalogue change; release 1 never names it).
-- Fan-out records the batch job that makes a delivery's first attempt (docs/webhooks.md).
ALTER TABLE "webhook_deliveries" ADD COLUMN "batch_id" text;
