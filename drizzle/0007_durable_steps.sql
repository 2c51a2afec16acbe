-- Durable steps: a delivery's steps (ctx.step, ctx.sleep, ctx.waitForEvent), one row per step id, deleted with the
-- delivery; and the (event name, path) pairs waits match on, so an arriving event is looked up by index.
CREATE TABLE "hookrun"."delivery_steps" (
	"delivery_id" bigint NOT NULL,
	"step_id" text NOT NULL,
	"seq" integer NOT NULL,
	"status" text NOT NULL,
	"result" jsonb,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"duration_ms" integer,
	"wake_at" timestamp with time zone,
	"wait_key" text,
	"matched_event_id" bigint,
	CONSTRAINT "delivery_steps_delivery_id_step_id_pk" PRIMARY KEY("delivery_id","step_id")
);
--> statement-breakpoint
CREATE TABLE "hookrun"."wait_paths" (
	"event_name" text NOT NULL,
	"path" text NOT NULL,
	CONSTRAINT "wait_paths_event_name_path_pk" PRIMARY KEY("event_name","path")
);
--> statement-breakpoint
ALTER TABLE "hookrun"."delivery_steps" ADD CONSTRAINT "delivery_steps_delivery_id_handler_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "hookrun"."handler_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivery_steps_wait_idx" ON "hookrun"."delivery_steps" USING btree ("wait_key") WHERE "hookrun"."delivery_steps"."status" = 'waiting';