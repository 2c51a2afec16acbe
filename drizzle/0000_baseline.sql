CREATE SCHEMA "hookrun";
--> statement-breakpoint
CREATE TABLE "hookrun"."admin_sessions_revoked" (
	"signature" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."alert_claims" (
	"key" text PRIMARY KEY NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."cron_pauses" (
	"job" text PRIMARY KEY NOT NULL,
	"paused_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."cron_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job" text NOT NULL,
	"trigger" text NOT NULL,
	"scheduled_for" timestamp with time zone,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"status" text NOT NULL,
	"error" text,
	"duration_ms" integer,
	"expires_at" timestamp with time zone,
	"attempt" integer DEFAULT 1 NOT NULL,
	"retry_of" bigint,
	"due_at" timestamp with time zone,
	"instance" text
);
--> statement-breakpoint
CREATE TABLE "hookrun"."customers" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text,
	"user_id" text,
	"deleted_at" timestamp with time zone,
	"source_updated_at" timestamp with time zone NOT NULL,
	"provider" text DEFAULT 'stripe' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."event_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "hookrun"."memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text,
	"user_id" text,
	"role" text,
	"deleted_at" timestamp with time zone,
	"source_updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text,
	"slug" text,
	"deleted_at" timestamp with time zone,
	"source_updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."pages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"title" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text,
	"status" text,
	"price_id" text,
	"current_period_end" timestamp with time zone,
	"cancel_at_period_end" boolean,
	"source_updated_at" timestamp with time zone NOT NULL,
	"provider" text DEFAULT 'stripe' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text,
	"first_name" text,
	"last_name" text,
	"deleted_at" timestamp with time zone,
	"source_updated_at" timestamp with time zone NOT NULL,
	"provider" text DEFAULT 'clerk' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."webhook_event_keys" (
	"source" text NOT NULL,
	"key" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webhook_event_keys_source_key_pk" PRIMARY KEY("source","key")
);
--> statement-breakpoint
CREATE TABLE "hookrun"."webhook_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"key" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"last_error" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	"order_key" text
);
--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD CONSTRAINT "event_attempts_event_id_webhook_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "hookrun"."webhook_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cron_runs_job_scheduled_for_attempt_uq" ON "hookrun"."cron_runs" USING btree ("job","scheduled_for","attempt");--> statement-breakpoint
CREATE INDEX "cron_runs_pending_idx" ON "hookrun"."cron_runs" USING btree ("due_at") WHERE "hookrun"."cron_runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "cron_runs_job_started_idx" ON "hookrun"."cron_runs" USING btree ("job","started_at");--> statement-breakpoint
CREATE INDEX "cron_runs_running_idx" ON "hookrun"."cron_runs" USING btree ("job") WHERE "hookrun"."cron_runs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "event_attempts_event_idx" ON "hookrun"."event_attempts" USING btree ("event_id","attempt");--> statement-breakpoint
CREATE INDEX "event_attempts_started_idx" ON "hookrun"."event_attempts" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "webhook_event_keys_received_idx" ON "hookrun"."webhook_event_keys" USING btree ("received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_source_key_uq" ON "hookrun"."webhook_events" USING btree ("source","key");--> statement-breakpoint
CREATE INDEX "webhook_events_order_idx" ON "hookrun"."webhook_events" USING btree ("order_key","id") WHERE "hookrun"."webhook_events"."order_key" is not null and "hookrun"."webhook_events"."status" in ('pending', 'failed', 'processing');--> statement-breakpoint
CREATE INDEX "webhook_events_due_idx" ON "hookrun"."webhook_events" USING btree ("next_attempt_at") WHERE "hookrun"."webhook_events"."status" in ('pending', 'failed', 'processing');--> statement-breakpoint
CREATE INDEX "webhook_events_status_idx" ON "hookrun"."webhook_events" USING btree ("status","id");