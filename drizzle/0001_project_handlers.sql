CREATE TABLE "hookrun"."project_migrations" (
	"name" text PRIMARY KEY NOT NULL,
	"hash" text NOT NULL,
	"applied_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "hookrun"."cron_runs" ADD COLUMN "output" text;--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD COLUMN "handler" text;--> statement-breakpoint
ALTER TABLE "hookrun"."webhook_events" ADD COLUMN "deliveries" jsonb;