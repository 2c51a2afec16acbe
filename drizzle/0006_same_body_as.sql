-- A body digest no longer makes a GitHub or Shopify delivery a duplicate: its `<source>#body` row remembers the
-- first event with that body, and a later event with the same body and a new delivery id is stored and marked
-- with that event's id (a suspected replay). Rows written before this version have no event id.
ALTER TABLE "hookrun"."webhook_event_keys" ADD COLUMN "event_id" bigint;--> statement-breakpoint
ALTER TABLE "hookrun"."webhook_events" ADD COLUMN "same_body_as" bigint;
