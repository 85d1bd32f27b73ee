-- Custom migration (drizzle-kit has no storage clause). A page of a revealed block's entries reads a
-- slice of `entries` (CONTRACT §10, GET …/entries?page&limit). Postgres reads a slice of an lz4 value
-- only by fetching the whole compressed value and decompressing up to the slice (~10-25 ms for the
-- last page of a 1,000,000-entry block, whatever the page size); an uncompressed out-of-line value
-- by fetching just the chunks that hold it (~0.1 ms). Entries are one byte per cell, and lz4 saved
-- only ~22% of them. Rows already stored keep their compression and are read as before.
ALTER TABLE "blocks" ALTER COLUMN "entries" SET STORAGE EXTERNAL;
