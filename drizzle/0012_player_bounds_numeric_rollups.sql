-- Exact figures, and one partner's figures never stopping the others (CONTRACT §9). Expand only:
-- the previous release reads and writes both tables as before.
--
-- Roll-ups are stored as numeric, as they are summed: an hour of one game with many players at the
-- bound passes 2^63 micro-USD. The table holds one row per partner, environment, hour and game, so
-- the rewrite is short.
ALTER TABLE "spin_hourly_totals" ALTER COLUMN "total_wagered_micros" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "spin_hourly_totals" ALTER COLUMN "total_paid_micros" SET DATA TYPE numeric;--> statement-breakpoint
-- A player's figures stay within 2^53 - 1 micro-USD. NOT VALID: enforced on every insert and update
-- from now on, without scanning (and locking) the existing rows; a row already past a bound refuses
-- further spins of its player, which is what the bound means.
ALTER TABLE "players" ADD CONSTRAINT "players_balance_bound" CHECK (abs("players"."balance_micros") <= 9007199254740991) NOT VALID;--> statement-breakpoint
ALTER TABLE "players" ADD CONSTRAINT "players_total_wagered_bound" CHECK ("players"."total_wagered_micros" <= 9007199254740991) NOT VALID;--> statement-breakpoint
ALTER TABLE "players" ADD CONSTRAINT "players_total_paid_bound" CHECK ("players"."total_paid_micros" <= 9007199254740991) NOT VALID;
