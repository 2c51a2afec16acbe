-- The one audit of operators' actions (console, admin API, CLI): who, how, when, what, on what, and how it ended.
-- Bulk replays are recorded here like every other action; replay_batches keeps the work and its progress.
CREATE TABLE "hookrun"."audit_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"operator" text NOT NULL,
	"role" text NOT NULL,
	"via" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"outcome" text NOT NULL,
	"detail" text
);
--> statement-breakpoint
CREATE INDEX "audit_entries_at_idx" ON "hookrun"."audit_entries" USING btree ("at");