CREATE TABLE "hookrun"."flow_keys" (
	"handler" text NOT NULL,
	"flow_key" text NOT NULL,
	"running" integer DEFAULT 0 NOT NULL,
	"tat" timestamp with time zone,
	"ready_at" timestamp with time zone,
	"rank" timestamp with time zone,
	CONSTRAINT "flow_keys_handler_flow_key_pk" PRIMARY KEY("handler","flow_key")
);
--> statement-breakpoint
CREATE TABLE "hookrun"."handler_controls" (
	"handler" text PRIMARY KEY NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"paused_at" timestamp with time zone,
	"running" integer DEFAULT 0 NOT NULL,
	"tat" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "hookrun"."handler_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"handler" text NOT NULL,
	"event_id" bigint NOT NULL,
	"flow_key" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"run_after" timestamp with time zone DEFAULT now() NOT NULL,
	"rank" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"started_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"first_at" timestamp with time zone,
	"debounced_ids" bigint[]
);
--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ADD CONSTRAINT "handler_deliveries_event_id_webhook_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "hookrun"."webhook_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "flow_keys_ready_idx" ON "hookrun"."flow_keys" USING btree ("handler","ready_at") WHERE "hookrun"."flow_keys"."ready_at" is not null;--> statement-breakpoint
CREATE INDEX "flow_keys_any_ready_idx" ON "hookrun"."flow_keys" USING btree ("ready_at") WHERE "hookrun"."flow_keys"."ready_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "handler_deliveries_handler_event_uq" ON "hookrun"."handler_deliveries" USING btree ("handler","event_id");--> statement-breakpoint
CREATE INDEX "handler_deliveries_next_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","flow_key","rank","event_id") WHERE "hookrun"."handler_deliveries"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "handler_deliveries_due_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","flow_key","run_after") WHERE "hookrun"."handler_deliveries"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "handler_deliveries_running_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","locked_until") WHERE "hookrun"."handler_deliveries"."status" = 'running';--> statement-breakpoint
CREATE INDEX "handler_deliveries_event_idx" ON "hookrun"."handler_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "handler_deliveries_status_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","status");