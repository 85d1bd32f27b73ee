-- drizzle-kit generated the snapshot; its statement for a custom type was unusable
-- (`SET DATA TYPE "undefined"."bytea"`, no USING), so the SQL is written here as for a custom migration.
-- Block entries move from JSON text to the binary KSB1 form (packages/core/src/par/entries.ts, about a
-- sixth of the bytes). Rows already stored keep their JSON text as its exact bytes, so their
-- commitments still verify; readers tell the two forms apart by the first byte. lz4 is set again:
-- a type change does not keep the column's compression method.
ALTER TABLE "blocks" ALTER COLUMN "entries" SET DATA TYPE bytea USING convert_to("entries", 'UTF8');--> statement-breakpoint
ALTER TABLE "blocks" ALTER COLUMN "entries" SET COMPRESSION lz4;
