CREATE TABLE "hookrun"."event_search" (
	"value" text NOT NULL,
	"event_id" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "hookrun"."webhook_events_payload_gin";--> statement-breakpoint
-- The payload keeps the body's text as it came (json): a kept request no longer stores it a second time.
ALTER TABLE "hookrun"."webhook_events" ALTER COLUMN "payload" SET DATA TYPE json USING "payload"::json;--> statement-breakpoint
ALTER TABLE "hookrun"."event_requests" ALTER COLUMN "body" DROP NOT NULL;--> statement-breakpoint
-- A delivery keeps its last attempt's duration: a processed attempt needs no history row.
ALTER TABLE "hookrun"."handler_deliveries" ADD COLUMN "duration_ms" integer;--> statement-breakpoint
-- The events stored so far become findable by their ids and emails (src/db/search-keys.ts has the same pattern).
INSERT INTO "hookrun"."event_search" ("value", "event_id")
SELECT DISTINCT CASE WHEN k.v LIKE '%@%' OR k.v LIKE '%-%' THEN lower(k.v) ELSE k.v END, e."id"
FROM "hookrun"."webhook_events" e,
LATERAL (SELECT (regexp_matches(e."payload"::text, '"([a-z][a-z0-9]{0,15}_(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]{8,64}|[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"', 'g'))[1] AS v LIMIT 32) k;--> statement-breakpoint
CREATE INDEX "event_search_value_idx" ON "hookrun"."event_search" USING btree ("value","event_id");--> statement-breakpoint
CREATE INDEX "event_search_event_brin" ON "hookrun"."event_search" USING brin ("event_id");
