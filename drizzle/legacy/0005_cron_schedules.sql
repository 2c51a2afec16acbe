CREATE TABLE "cron_pauses" (
	"job" text PRIMARY KEY NOT NULL,
	"paused_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP INDEX "cron_runs_job_scheduled_for_uq";--> statement-breakpoint
ALTER TABLE "cron_runs" ADD COLUMN "attempt" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "cron_runs" ADD COLUMN "retry_of" bigint;--> statement-breakpoint
ALTER TABLE "cron_runs" ADD COLUMN "due_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "cron_runs" ADD COLUMN "instance" text;--> statement-breakpoint
CREATE UNIQUE INDEX "cron_runs_job_scheduled_for_attempt_uq" ON "cron_runs" USING btree ("job","scheduled_for","attempt");--> statement-breakpoint
CREATE INDEX "cron_runs_pending_idx" ON "cron_runs" USING btree ("due_at") WHERE "cron_runs"."status" = 'pending';