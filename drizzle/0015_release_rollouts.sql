CREATE TABLE "release_rollouts" (
	"release" integer PRIMARY KEY NOT NULL,
	"finished_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
