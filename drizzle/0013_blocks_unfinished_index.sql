-- Built CONCURRENTLY, so writes to blocks (a spin's block bookkeeping, a seal) never wait for it; the
-- migrator runs this outside a transaction, and a build that failed half-way (an invalid index) is
-- dropped and built again when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS "blocks_unfinished_idx";--> statement-breakpoint
CREATE INDEX CONCURRENTLY "blocks_unfinished_idx" ON "blocks" USING btree ("game_id","sequence") WHERE status <> 'exhausted' and closed_at is null and seed_hash is not null;
