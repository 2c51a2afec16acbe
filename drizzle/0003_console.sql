CREATE TABLE "hookrun"."event_requests" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"headers" jsonb NOT NULL,
	"body" text NOT NULL,
	"verification" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hookrun"."issues" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"fingerprint" text NOT NULL,
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"title" text NOT NULL,
	"detail" text,
	"status" text DEFAULT 'open' NOT NULL,
	"occurrences" integer DEFAULT 1 NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"notified_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "hookrun"."replay_batches" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"selection" jsonb NOT NULL,
	"handler" text,
	"max_event_id" bigint NOT NULL,
	"rate" integer NOT NULL,
	"total" integer NOT NULL,
	"replayed" integer DEFAULT 0 NOT NULL,
	"cursor" bigint DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"locked_until" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "hookrun"."sender_rejections" (
	"route" text NOT NULL,
	"reason" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "sender_rejections_route_reason_minute_pk" PRIMARY KEY("route","reason","minute")
);
--> statement-breakpoint
ALTER TABLE "hookrun"."event_requests" ADD CONSTRAINT "event_requests_event_id_webhook_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "hookrun"."webhook_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "issues_fingerprint_uq" ON "hookrun"."issues" USING btree ("fingerprint");--> statement-breakpoint
CREATE INDEX "issues_status_idx" ON "hookrun"."issues" USING btree ("status","last_seen_at");--> statement-breakpoint
CREATE INDEX "replay_batches_running_idx" ON "hookrun"."replay_batches" USING btree ("id") WHERE "hookrun"."replay_batches"."status" = 'running';--> statement-breakpoint
CREATE INDEX "sender_rejections_minute_idx" ON "hookrun"."sender_rejections" USING btree ("minute");--> statement-breakpoint
CREATE INDEX "webhook_events_source_idx" ON "hookrun"."webhook_events" USING btree ("source","id");--> statement-breakpoint
CREATE INDEX "webhook_events_type_idx" ON "hookrun"."webhook_events" USING btree ("type","id");--> statement-breakpoint
CREATE INDEX "webhook_events_received_brin" ON "hookrun"."webhook_events" USING brin ("received_at");--> statement-breakpoint
CREATE INDEX "webhook_events_payload_gin" ON "hookrun"."webhook_events" USING gin ("payload" jsonb_path_ops);