CREATE TABLE "hookrun"."new_events" (
	"event_id" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
DROP INDEX "hookrun"."webhook_events_order_idx";--> statement-breakpoint
DROP INDEX "hookrun"."webhook_events_due_idx";--> statement-breakpoint
DROP INDEX "hookrun"."flow_keys_any_ready_idx";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_handler_event_uq";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_next_idx";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_event_idx";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_status_idx";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_due_idx";--> statement-breakpoint
DROP INDEX "hookrun"."handler_deliveries_running_idx";--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ALTER COLUMN "flow_key" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ALTER COLUMN "flow_key" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ALTER COLUMN "status" SET DEFAULT 'pending';--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD COLUMN "run" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD COLUMN "stack" text;--> statement-breakpoint
ALTER TABLE "hookrun"."event_attempts" ADD COLUMN "actor" text;--> statement-breakpoint
ALTER TABLE "hookrun"."flow_keys" ADD COLUMN "idle_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ADD COLUMN "shared" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" ADD COLUMN "run" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "handler_deliveries_event_handler_uq" ON "hookrun"."handler_deliveries" USING btree ("event_id","handler");--> statement-breakpoint
-- One delivery model: a handed-over delivery waits as `pending`; what the event row kept of its other handlers becomes their deliveries.
UPDATE "hookrun"."handler_deliveries" SET "status" = 'pending' WHERE "status" = 'waiting';--> statement-breakpoint
INSERT INTO "hookrun"."handler_deliveries" ("event_id", "handler", "status", "attempts", "run_after", "rank", "last_error", "finished_at", "created_at")
SELECT e."id", d.key, d.value->>'status', e."attempts", e."next_attempt_at", 'epoch', d.value->>'error', coalesce(e."processed_at", e."received_at"), e."received_at"
FROM "hookrun"."webhook_events" e, jsonb_each(e."deliveries"->'done') d
WHERE e."deliveries" IS NOT NULL AND d.value->>'status' IN ('processed', 'dead')
ON CONFLICT ("event_id", "handler") DO NOTHING;--> statement-breakpoint
-- Events the inbox still owed a run (pending, being processed, retrying): their deliveries are made by the next claim, which keeps those above.
INSERT INTO "hookrun"."new_events" ("event_id")
SELECT "id" FROM "hookrun"."webhook_events" WHERE "status" IN ('pending', 'processing', 'failed');--> statement-breakpoint
UPDATE "hookrun"."webhook_events" SET "status" = 'pending' WHERE "status" IN ('processing', 'waiting');--> statement-breakpoint
UPDATE "hookrun"."handler_deliveries" SET "shared" = true
WHERE "event_id" IN (SELECT "event_id" FROM "hookrun"."handler_deliveries" GROUP BY "event_id" HAVING count(*) > 1);--> statement-breakpoint
-- A waiting event whose deliveries all ended takes their outcome.
UPDATE "hookrun"."webhook_events" e
SET "status" = s."status", "processed_at" = CASE WHEN s."status" = 'processed' THEN coalesce(e."processed_at", now()) END
FROM (
  SELECT "event_id", CASE
    WHEN bool_or("status" = 'failed') THEN 'failed'
    WHEN bool_or("status" IN ('pending', 'running')) THEN 'pending'
    WHEN bool_or("status" IN ('dead', 'parked')) THEN 'dead'
    ELSE 'processed' END AS "status"
  FROM "hookrun"."handler_deliveries" GROUP BY "event_id"
) s
WHERE e."id" = s."event_id" AND e."status" = 'pending' AND NOT EXISTS (SELECT 1 FROM "hookrun"."new_events" n WHERE n."event_id" = e."id");--> statement-breakpoint
-- The hand-over's "waiting" attempt rows were no attempt.
DELETE FROM "hookrun"."event_attempts" WHERE "outcome" = 'waiting';--> statement-breakpoint
-- Key state only for keys with work: rebuilt from the deliveries that wait.
DELETE FROM "hookrun"."flow_keys";--> statement-breakpoint
INSERT INTO "hookrun"."flow_keys" ("handler", "flow_key", "ready_at", "rank")
SELECT "handler", "flow_key", now(), min("rank") FROM "hookrun"."handler_deliveries"
WHERE "status" IN ('pending', 'failed') AND "flow_key" IS NOT NULL GROUP BY "handler", "flow_key";--> statement-breakpoint
CREATE INDEX "flow_keys_idle_idx" ON "hookrun"."flow_keys" USING btree ("handler","idle_until") WHERE "hookrun"."flow_keys"."idle_until" is not null;--> statement-breakpoint
CREATE INDEX "handler_deliveries_open_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","flow_key","rank","event_id") WHERE "hookrun"."handler_deliveries"."flow_key" is not null and "hookrun"."handler_deliveries"."status" in ('pending', 'failed');--> statement-breakpoint
CREATE INDEX "handler_deliveries_ended_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","status") WHERE "hookrun"."handler_deliveries"."status" in ('dead', 'parked');--> statement-breakpoint
CREATE INDEX "handler_deliveries_due_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","run_after") WHERE "hookrun"."handler_deliveries"."status" in ('pending', 'failed');--> statement-breakpoint
CREATE INDEX "handler_deliveries_inline_due_idx" ON "hookrun"."handler_deliveries" USING btree ("run_after") WHERE "hookrun"."handler_deliveries"."flow_key" is null and "hookrun"."handler_deliveries"."status" in ('pending', 'failed');--> statement-breakpoint
CREATE INDEX "handler_deliveries_running_idx" ON "hookrun"."handler_deliveries" USING btree ("handler","flow_key") WHERE "hookrun"."handler_deliveries"."status" = 'running';--> statement-breakpoint
ALTER TABLE "hookrun"."webhook_events" DROP COLUMN "locked_until";--> statement-breakpoint
ALTER TABLE "hookrun"."webhook_events" DROP COLUMN "deliveries";--> statement-breakpoint
ALTER TABLE "hookrun"."flow_keys" DROP COLUMN "running";--> statement-breakpoint
ALTER TABLE "hookrun"."handler_controls" DROP COLUMN "running";--> statement-breakpoint
ALTER TABLE "hookrun"."handler_deliveries" DROP COLUMN "first_at";
