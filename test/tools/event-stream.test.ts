import { beforeAll, describe, expect, it } from 'vitest';
import { readServerSentEvents } from '../../src/cli/listen.js';
import { MAX_EVENT_STREAMS } from '../../src/http/event-stream.js';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { secretNeedles } from '../helpers/secret-scan.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };

interface Streamed {
  id: string | undefined;
  event: { id: number; source: string; key: string; type: string; payload: unknown };
}

describe.each(databaseKinds())('GET /api/events/stream ($name)', (kind) => {
  const testDb = useTestDatabase(kind);
  let tools: ToolsApp;
  beforeAll(async () => {
    tools = await createToolsApp(testDb.db);
  });

  const maxId = async () => Number((await testDb.db.query<{ max: number | null }>('SELECT max(id) AS max FROM hookrun.webhook_events'))[0]!.max ?? 0);

  /** Open a stream and collect `count` events (bounded), then hang up. */
  async function collect(path: string, count: number, headers: Record<string, string> = {}): Promise<Streamed[]> {
    const res = await tools.app.request(path, { headers: { ...auth, ...headers } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const got: Streamed[] = [];
    const body = res.body!;
    const deadline = setTimeout(() => void body.cancel().catch(() => undefined), 10_000);
    try {
      for await (const message of readServerSentEvents(body)) {
        if (message.event !== 'event') continue;
        got.push({ id: message.id, event: JSON.parse(message.data) });
        if (got.length >= count) break;
      }
    } finally {
      clearTimeout(deadline);
      await body.cancel().catch(() => undefined);
    }
    return got;
  }

  it('sends each event committed after it opened, with its id; filters by source; no secret in it', async () => {
    await postSample(tools, 'auth', 'user.created'); // before the stream: not sent
    const streamed = collect('/api/events/stream?source=payments', 2, { 'last-event-id': String(await maxId()) }); // where a new stream starts, fixed for the test
    await postSample(tools, 'auth', 'user.updated'); // filtered out
    const a = await postSample(tools, 'payments', 'invoice.paid');
    const b = await postSample(tools, 'payments', 'checkout.session.completed');
    const got = await streamed;
    expect(got.map((g) => [g.id, g.event.id, g.event.source])).toEqual([
      [String(a), a, 'payments'],
      [String(b), b, 'payments'],
    ]);
    expect((got[0]!.event.payload as { type: string }).type).toBe('invoice.paid');
    const text = JSON.stringify(got);
    for (const needle of secretNeedles()) expect(text).not.toContain(needle);
  });

  it('resumes after Last-Event-ID: nothing missed, nothing before it', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await postSample(tools, 'auth', 'user.created'));
    const got = await collect('/api/events/stream', 2, { 'last-event-id': String(ids[1]) });
    expect(got.map((g) => g.event.id)).toEqual([ids[2], ids[3]]);
  });

  it.skipIf(kind.name !== 'postgres')("an id committed after a higher one (another instance's slower transaction) is still sent", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const slowInserted = new Promise<void>((resolve) => (inserted = resolve));
    const slow = testDb.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO hookrun.webhook_events (source, key, type, payload) VALUES ('auth', 'slow_commit', 'user.created', '{}'::jsonb)`);
      inserted();
      await gate; // holds its id, uncommitted
    });
    await slowInserted;
    const res = await tools.app.request('/api/events/stream?source=auth', { headers: { ...auth, 'last-event-id': String(await maxId()) } });
    const messages = readServerSentEvents(res.body!);
    expect((await messages.next()).value).toMatchObject({ event: 'ready' });
    const fast = await postSample(tools, 'auth', 'user.created'); // a higher id, committed first
    const first = JSON.parse((await messages.next()).value!.data) as Streamed['event'];
    expect(first.id).toBe(fast); // sent: the stream's cursor is now past the slow id
    release();
    await slow;
    const second = JSON.parse((await messages.next()).value!.data) as Streamed['event'];
    await res.body!.cancel().catch(() => undefined);
    expect(second.key).toBe('slow_commit');
    expect(second.id).toBeLessThan(fast);
  });

  it('refuses a wrong token (401), a bad filter (400), and more than the open-stream limit (503)', async () => {
    expect((await tools.app.request('/api/events/stream', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    expect((await tools.app.request('/api/events/stream?source=mail', { headers: auth })).status).toBe(400);
    const fresh = await createToolsApp(testDb.db); // its own streams only: the earlier tests' may still be closing
    const open = await Promise.all(Array.from({ length: MAX_EVENT_STREAMS }, () => fresh.app.request('/api/events/stream', { headers: auth })));
    expect(open.map((r) => r.status)).toEqual(new Array(MAX_EVENT_STREAMS).fill(200));
    const refused = await fresh.app.request('/api/events/stream', { headers: auth });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`${MAX_EVENT_STREAMS} API event streams are already open`);
    await Promise.all(open.map((r) => r.body!.cancel()));
  });
});

describe('readServerSentEvents', () => {
  it('splits messages across chunks, joins data lines, skips comments', async () => {
    const chunks = ['id: 7\nevent: ev', 'ent\ndata: {"a":\ndata: 1}\n\n: keep-alive\n\n', 'data: x\r\n\r\n'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    const out = [];
    for await (const m of readServerSentEvents(body)) out.push(m);
    expect(out).toEqual([{ id: '7', event: 'event', data: '{"a":\n1}' }, { data: 'x' }]);
  });
});
