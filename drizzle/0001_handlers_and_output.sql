ALTER TABLE "hookrun"."cron_runs" ADD COLUMN "output" text;--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD COLUMN "handler" text;--> statement-breakpoint
ALTER TABLE "hookrun"."webhook_events" ADD COLUMN "deliveries" jsonb;