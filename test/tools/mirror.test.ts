import { beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { databaseKinds, useTestDatabase } from '../helpers/db.js';
import { drain, testWorker } from '../inbox/fixtures.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };

describe.each(databaseKinds())('GET /api/mirror/:table ($name)', (kind) => {
  const testDb = useTestDatabase(kind);
  let tools: ToolsApp;
  beforeAll(async () => {
    tools = await createToolsApp(testDb.db);
  });
  const get = async (path: string) => {
    const res = await tools.app.request(path, { headers: auth });
    return { status: res.status, body: (await res.json()) as { rows?: Array<Record<string, unknown>>; error?: { code: string; message: string } } };
  };

  it('shows what the handlers wrote: a sent user is in users, newest first, searchable', async () => {
    await postSample(tools, 'auth', 'user.created');
    await postSample(tools, 'payments', 'checkout.session.completed');
    await drain(testWorker(testDb.db).worker);
    const users = await get('/api/mirror/users');
    expect(users.status).toBe(200);
    expect(users.body.rows).toHaveLength(1);
    const user = users.body.rows![0]!;
    expect(Object.keys(user)).toEqual(['id', 'email', 'first_name', 'last_name', 'deleted_at', 'source_updated_at']);
    expect((await get(`/api/mirror/users?search=${encodeURIComponent(String(user.email).slice(0, 6))}`)).body.rows).toHaveLength(1);
    expect((await get('/api/mirror/users?search=100%25_none')).body.rows).toEqual([]); // % and _ are literal
    expect((await get('/api/mirror/customers')).body.rows).toHaveLength(1);
  });

  it('an unknown table is 404 naming the tables; a bad limit is 400', async () => {
    const unknown = await get('/api/mirror/webhook_events');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error!.message).toContain('Tables: users, organizations, memberships, customers, subscriptions');
    expect((await get('/api/mirror/users?limit=201')).status).toBe(400);
  });
});
