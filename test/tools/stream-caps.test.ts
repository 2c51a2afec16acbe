import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONSOLE_STREAMS, MAX_EVENT_STREAMS } from '../../src/http/event-stream.js';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createToolsApp, type ToolsApp } from './tools-app.js';

const auth = { authorization: `Bearer ${SECRETS.admin}` };

describe('console tabs and API streams each have their own cap', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let cookie: string;
  const api = () => tools.app.request('/api/events/stream', { headers: auth });
  const tab = () => tools.app.request('/admin/stream', { headers: { cookie } });

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db);
    const login = await tools.app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  });
  afterAll(async () => testDb?.close());

  it('full API streams leave console tabs live, full console tabs leave `hookrun listen` room; each says which limit is reached', async () => {
    const streams = await Promise.all(Array.from({ length: MAX_EVENT_STREAMS }, api));
    expect(streams.map((r) => r.status)).toEqual(new Array(MAX_EVENT_STREAMS).fill(200));
    const refusedApi = await api();
    expect(refusedApi.status).toBe(503);
    expect(((await refusedApi.json()) as { error: { message: string } }).error.message).toBe(
      `${MAX_EVENT_STREAMS} API event streams are already open on this instance (the limit for /api/events/stream; console tabs have their own). Close one, or retry in a while.`,
    );

    const tabs = await Promise.all(Array.from({ length: MAX_CONSOLE_STREAMS }, tab));
    expect(tabs.map((r) => r.status)).toEqual(new Array(MAX_CONSOLE_STREAMS).fill(200));
    const refusedTab = await tab();
    expect(refusedTab.status).toBe(503);
    expect(await refusedTab.text()).toContain(`${MAX_CONSOLE_STREAMS} console tabs already follow events live on this instance (their limit)`);

    await Promise.all(streams.map((r) => r.body!.cancel()));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the closed streams' pumps end
    expect((await tab()).status).toBe(503); // the API's room is not the tabs'
    const again = await api();
    expect(again.status).toBe(200);
    await Promise.all([again, ...tabs].map((r) => r.body!.cancel()));
  });
});
