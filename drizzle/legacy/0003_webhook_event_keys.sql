CREATE TABLE "webhook_event_keys" (
	"source" text NOT NULL,
	"key" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webhook_event_keys_source_key_pk" PRIMARY KEY("source","key")
);
--> statement-breakpoint
CREATE INDEX "webhook_event_keys_received_idx" ON "webhook_event_keys" USING btree ("received_at");