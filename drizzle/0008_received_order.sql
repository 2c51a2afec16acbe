-- Lists are newest received first: a btree on (received_at, id) reads a page of them in order, and serves time ranges, so it
-- takes the place of the BRIN on received_at.
DROP INDEX "hookrun"."webhook_events_received_brin";--> statement-breakpoint
CREATE INDEX "webhook_events_received_idx" ON "hookrun"."webhook_events" USING btree ("received_at","id");