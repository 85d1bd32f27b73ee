-- The failed deliveries a recover counts and pages through (packages/db/src/repositories/webhook-recovery.ts).
-- Built CONCURRENTLY, outside a transaction (the migrator), so deliveries are written meanwhile; a
-- build that failed half-way is dropped and built again when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS "webhook_deliveries_failed_idx";--> statement-breakpoint
CREATE INDEX CONCURRENTLY "webhook_deliveries_failed_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at","id") WHERE status = 'failed';
