import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { z } from 'zod';
import type { Database } from '../db/database.js';
import { readEventFeed } from '../db/event-feed.js';
import { EVENTS_CHANNEL } from '../inbox/queue-sql.js';
import { AppError, messageOf } from '../errors.js';
import { firstIssue, streamQuery } from './admin-schemas.js';
import { checkSource, knownSources } from './known-sources.js';
import type { Logger } from '../log.js';

/** Open API streams (`GET /api/events/stream`: `hookrun listen`, scripts) one hookrun serves at once; each holds a connection and reads the inbox. */
export const MAX_EVENT_STREAMS = 16;
/** Open console tabs listening live (`GET /admin/stream`) one hookrun serves at once: their own cap, so tabs cannot lock out `hookrun listen`, nor the reverse. */
export const MAX_CONSOLE_STREAMS = 16;

/** Who opens a stream: each kind has its own cap. */
export type StreamKind = 'api' | 'console';

/** What a full cap says, per kind: which limit, and what to do. */
const FULL: Record<StreamKind, string> = {
  api: `${MAX_EVENT_STREAMS} API event streams are already open on this instance (the limit for /api/events/stream; console tabs have their own). Close one, or retry in a while.`,
  console: `${MAX_CONSOLE_STREAMS} console tabs already follow events live on this instance (their limit). Close a tab you no longer watch; this page works without live updates, reload it later.`,
};
const CAPS: Record<StreamKind, number> = { api: MAX_EVENT_STREAMS, console: MAX_CONSOLE_STREAMS };
/** Events read (and written to the socket) at a time: a slow client holds at most this many in memory. */
const BATCH = 100;
/** A wake-up may be missed (another instance's NOTIFY on a dropped LISTEN): read at least this often. */
const POLL_INTERVAL_MS = 1000;
/** An SSE comment this often keeps proxies from closing an idle stream. */
const KEEP_ALIVE_MS = 15_000;
/** PostgreSQL: instances commit side by side, so a lower id can appear late; look back this far for one. */
const LATE_WINDOW_SECONDS = 15;

/** The live stream's controls: the route handler, and a way to end every stream at shutdown. */
export interface EventStream {
  handle(c: Context, kind?: StreamKind): Promise<Response>;
  /** End all open streams (their clients reconnect elsewhere and resume by id). */
  close(): void;
}

/**
 * `GET /api/events/stream`: server-sent events of every event as it is
 * committed (`event: event`, after one `event: ready` saying where the stream
 * starts), `id:` being the inbox id, so a client resumes with
 * `Last-Event-ID` and misses nothing. Woken by NOTIFY on `hookrun_events`
 * (any instance's commit), with a 1 s poll behind it; filtered by source and
 * type; keep-alives every 15 s. Sends payloads, never a secret.
 */
export function createEventStream(deps: { db: Database; log: Logger; sources?: readonly string[] }): EventStream {
  const { db, log } = deps;
  const open = new Set<{ kind: StreamKind; wake(): void; end(): void }>();
  const starting: Record<StreamKind, number> = { api: 0, console: 0 }; // accepted streams whose pump has not registered yet
  const openOf = (kind: StreamKind) => [...open].filter((s) => s.kind === kind).length + starting[kind];
  let unlisten: Promise<(() => Promise<void>) | undefined> | undefined;
  const wakeAll = () => open.forEach((s) => s.wake());
  const listenWhileOpen = () => {
    unlisten ??= db.listen(EVENTS_CHANNEL, wakeAll).catch((error: unknown) => {
      log.warn({ err: { message: messageOf(error) } }, 'event stream: LISTEN failed; streams poll every second');
      return undefined;
    });
  };
  const stopListeningIfIdle = () => {
    if (open.size > 0 || !unlisten) return;
    const pending = unlisten;
    unlisten = undefined;
    void pending.then((stop) => stop?.()).catch(() => undefined);
  };

  async function pump(stream: SSEStreamingApi, query: z.output<typeof streamQuery>, kind: StreamKind): Promise<void> {
    let wake: () => void = () => undefined;
    let ended = false;
    const handle = { kind, wake: () => wake(), end: () => ((ended = true), wake(), stream.abort()) };
    open.add(handle);
    starting[kind]--;
    stream.onAbort(() => {
      ended = true;
      wake();
    });
    listenWhileOpen();
    const late = db.kind === 'postgres' ? LATE_WINDOW_SECONDS : 0;
    const sent = new Map<number, number>(); // ids sent recently, for the late window
    let cursor =
      (query.lastEventId === undefined ? undefined : Number(query.lastEventId)) ??
      (await db.query<{ max: number | null }>('SELECT max(id)::bigint AS max FROM hookrun.webhook_events'))[0]?.max ??
      0;
    cursor = Number(cursor);
    const lateFloorId = cursor; // the client has everything up to here (or the stream starts here)
    // Tell the client where it stands: from here on, every commit reaches it (no id, so Last-Event-ID stays).
    await stream.writeSSE({ event: 'ready', data: JSON.stringify({ after: cursor }) });
    let lastWrite = Date.now();
    try {
      while (!ended) {
        const batch = await readEventFeed(db, {
          afterId: cursor,
          source: query.source,
          type: query.type,
          limit: BATCH,
          lateWindowSeconds: late,
          lateFloorId,
          alreadySent: [...sent.keys()],
        });
        for (const event of batch) {
          await stream.writeSSE({ id: String(event.id), event: 'event', data: JSON.stringify(event) });
          cursor = Math.max(cursor, Number(event.id));
          if (late > 0) sent.set(Number(event.id), Date.now());
        }
        if (batch.length > 0) lastWrite = Date.now();
        for (const [id, at] of sent) if (Date.now() - at > (late + 5) * 1000) sent.delete(id); // +5 s: database and process clocks differ
        if (batch.length === BATCH) continue;
        if (Date.now() - lastWrite >= KEEP_ALIVE_MS) {
          await stream.write(': keep-alive\n\n');
          lastWrite = Date.now();
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_INTERVAL_MS);
          wake = () => (clearTimeout(timer), resolve());
        });
      }
    } finally {
      open.delete(handle);
      stopListeningIfIdle();
    }
  }

  return {
    async handle(c, kind = 'api') {
      const parsed = streamQuery.safeParse({ ...c.req.query(), lastEventId: c.req.header('last-event-id') ?? c.req.query('lastEventId') });
      if (!parsed.success) throw new AppError('bad_request', firstIssue(parsed.error));
      checkSource(parsed.data.source, deps.sources ?? knownSources({}));
      if (openOf(kind) >= CAPS[kind]) throw new AppError('unavailable', FULL[kind]);
      c.header('cache-control', 'no-store');
      starting[kind]++;
      return streamSSE(
        c,
        (stream) => pump(stream, parsed.data, kind),
        async (error) => log.warn({ err: { message: messageOf(error) } }, 'event stream ended by an error; the client resumes by Last-Event-ID'),
      );
    },
    close() {
      for (const s of [...open]) s.end();
    },
  };
}
