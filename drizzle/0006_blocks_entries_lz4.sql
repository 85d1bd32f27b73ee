-- Custom migration (drizzle-kit cannot express column compression). A block's entries (~1 MB of
-- JSON text per 10,000 outcomes) are written once and read rarely; pglz compressed them at ~25 MB/s
-- and was the largest cost of sealing a block. lz4 compresses several times faster. Rows already
-- stored keep their pglz compression; both are read transparently.
ALTER TABLE "blocks" ALTER COLUMN "entries" SET COMPRESSION lz4;
