ALTER TABLE "event_attempts" ADD COLUMN "handler" text;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "deliveries" jsonb;