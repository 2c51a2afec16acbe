CREATE TABLE "hookrun"."event_search" (
	"value" text NOT NULL,
	"event_id" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "hookrun"."webhook_events_payload_gin";--> statement-breakpoint
-- The events stored so far become findable by their ids, emails and uuids (src/db/search-keys.ts has the same
-- patterns; here each string value is read off the jsonb, cheap tests first and the full pattern last): about
-- 0.1 ms an event, before the payload becomes json.
INSERT INTO "hookrun"."event_search" ("value", "event_id")
SELECT DISTINCT CASE WHEN k.v LIKE '%@%' OR k.v LIKE '%-%' THEN lower(k.v) ELSE k.v END, e."id"
FROM "hookrun"."webhook_events" e,
LATERAL (
  SELECT s.v FROM (SELECT j #>> '{}' AS v FROM jsonb_path_query(e."payload", 'strict $.** ? (@.type() == "string")') j) s
  WHERE length(s.v) BETWEEN 10 AND 200 AND (s.v LIKE '%\_%' OR s.v LIKE '%@%' OR s.v LIKE '%-%') AND s.v NOT LIKE '%/%' AND s.v NOT LIKE '% %'
    AND (s.v ~ '^[a-z][a-z0-9]{0,15}_[A-Za-z0-9]{8,64}$' AND substr(s.v, position('_' in s.v) + 1) ~ '[A-Z0-9]'
      OR s.v ~ '^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}$'
      OR s.v ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
  LIMIT 32) k;--> statement-breakpoint
-- The payload keeps the body's text as it came (json): a kept request no longer stores it a second time.
ALTER TABLE "hookrun"."webhook_events" ALTER COLUMN "payload" SET DATA TYPE json USING "payload"::json;--> statement-breakpoint
ALTER TABLE "hookrun"."event_requests" ALTER COLUMN "body" DROP NOT NULL;--> statement-breakpoint
-- A delivery keeps its last attempt's duration: a processed attempt needs no history row.
ALTER TABLE "hookrun"."handler_deliveries" ADD COLUMN "duration_ms" integer;--> statement-breakpoint
CREATE INDEX "event_search_value_idx" ON "hookrun"."event_search" USING btree ("value","event_id");--> statement-breakpoint
CREATE INDEX "event_search_event_brin" ON "hookrun"."event_search" USING brin ("event_id");
