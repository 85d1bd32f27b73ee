CREATE TABLE "pool_cycles" (
	"game_id" integer NOT NULL,
	"cycle" integer NOT NULL,
	"tiers" "bytea" NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pool_cycles_game_id_cycle_pk" PRIMARY KEY("game_id","cycle")
);
--> statement-breakpoint
ALTER TABLE "blocks" ADD COLUMN "cycle_offset" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "games" ADD COLUMN "low_reserve_armed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "pool_cycles" ADD CONSTRAINT "pool_cycles_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;