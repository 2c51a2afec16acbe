import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { FakeStripeApi, TEST_STRIPE_KEY } from '../helpers/fake-stripe-api.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

type Schema = { type?: string; minimum?: number; maximum?: number; maxLength?: number; enum?: string[] };
interface Param {
  name: string;
  in: string;
  schema: Schema;
}
interface Operation {
  parameters?: Param[];
  requestBody?: { content: { 'application/json': { schema: { properties: Record<string, Schema>; required?: string[] } } } };
}

/** For one bound of one field: a value at the limit (must pass validation) and one past it (must be refused). */
function probes(schema: Schema): Array<{ ok: unknown; bad: unknown; what: string }> {
  const out = [];
  if (schema.maximum !== undefined) out.push({ ok: schema.maximum, bad: schema.maximum + 1, what: `maximum ${schema.maximum}` });
  if (schema.minimum !== undefined) out.push({ ok: schema.minimum, bad: schema.minimum - 1, what: `minimum ${schema.minimum}` });
  if (schema.maxLength !== undefined)
    out.push({ ok: 'a'.repeat(schema.maxLength), bad: 'a'.repeat(schema.maxLength + 1), what: `maxLength ${schema.maxLength}` });
  if (schema.enum) out.push({ ok: schema.enum[0], bad: 'not-one-of-them', what: `enum ${schema.enum.join('|')}` });
  return out;
}

/** Refused by the schema: 400 whose message names the field (as admin.ts words it: "<field>: …"). */
const refusedFor = async (res: Response, field: string) => {
  if (res.body && res.headers.get('content-type')?.startsWith('text/event-stream')) await res.body.cancel();
  if (res.status !== 400) return false;
  return ((await res.json()) as { error: { message: string } }).error.message.startsWith(`${field}:`);
};

describe('every documented admin parameter is enforced as documented (GET /openapi.json)', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  const stripe = new FakeStripeApi();
  const auth = { authorization: `Bearer ${SECRETS.admin}` };
  let paths: Record<string, Record<string, Operation>>;
  let eventId: number;

  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db, { STRIPE_SECRET_KEY: TEST_STRIPE_KEY, STRIPE_API_BASE: await stripe.start() });
    eventId = await postSample(tools, 'auth', 'user.created');
    paths = ((await (await tools.app.request('/openapi.json')).json()) as { paths: typeof paths }).paths;
  });
  afterAll(async () => {
    await stripe.close();
    await testDb?.close();
  });

  const url = (template: string) =>
    template.replace('{id}', String(eventId)).replace('{job}', 'tick').replace('{table}', 'users').replace('{sender}', 'github');

  it('query parameters: the documented limit passes, one past it is a 400 naming the parameter', async () => {
    let checked = 0;
    for (const [template, operations] of Object.entries(paths).filter(([p]) => p.startsWith('/api/'))) {
      for (const [method, op] of Object.entries(operations)) {
        for (const param of (op.parameters ?? []).filter((p) => p.in === 'query')) {
          for (const probe of probes(param.schema)) {
            const send = (value: unknown) =>
              tools.app.request(`${url(template)}?${new URLSearchParams({ [param.name]: String(value) })}`, { method: method.toUpperCase(), headers: auth });
            expect(await refusedFor(await send(probe.ok), param.name), `${method} ${template} ${param.name} at ${probe.what}`).toBe(false);
            expect(await refusedFor(await send(probe.bad), param.name), `${method} ${template} ${param.name} past ${probe.what}`).toBe(true);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(15); // not vacuous: bounds and enums of events, runs, jobs, run, mirror, stream
  });

  it('request bodies: every documented field and bound is what the API accepts and refuses', async () => {
    let checked = 0;
    for (const [template, operations] of Object.entries(paths).filter(([p]) => p.startsWith('/api/'))) {
      for (const [method, op] of Object.entries(operations)) {
        const schema = op.requestBody?.content['application/json'].schema;
        if (!schema) continue;
        const valid = Object.fromEntries((schema.required ?? []).map((f) => [f, schema.properties[f]!.enum?.[0] ?? '3d']));
        for (const [field, fieldSchema] of Object.entries(schema.properties)) {
          for (const probe of probes(fieldSchema)) {
            const send = (value: unknown) =>
              tools.app.request(url(template), {
                method: method.toUpperCase(),
                headers: { ...auth, 'content-type': 'application/json' },
                body: JSON.stringify({ ...valid, [field]: value }),
              });
            expect(await refusedFor(await send(probe.ok), field), `${template} ${field} at ${probe.what}`).toBe(false);
            expect(await refusedFor(await send(probe.bad), field), `${template} ${field} past ${probe.what}`).toBe(true);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  });

  it('documents the fixes: limit up to 200, replay by status only, a status filter on cron runs that works', async () => {
    const limit = paths['/api/events']!.get!.parameters!.find((p) => p.name === 'limit')!;
    expect(paths['/api/events']!.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['handler', 'from', 'to', 'search', 'where', 'parked']));
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 200 });
    expect(Object.keys(paths['/api/events/replay']!.post!.requestBody!.content['application/json'].schema.properties)).toEqual([
      'status',
      'source',
      'type',
      'actor',
    ]);
    const issueStatus = paths['/api/issues']!.get!.parameters!.find((p) => p.name === 'status')!;
    expect(issueStatus.schema.enum).toEqual(['open', 'acknowledged', 'resolved']);
    for (const path of ['/api/issues/{id}', '/api/issues/{id}/acknowledge', '/api/issues/{id}/resolve', '/api/senders'])
      expect(paths[path], path).toBeDefined();
    await tools.app.request('/cron/tick', { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
    await tools.app.request('/cron/boom', { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });
    const failed = (await (await tools.app.request('/api/cron/runs?status=failed', { headers: auth })).json()) as { runs: Array<{ job: string }> };
    expect(failed.runs.map((r) => r.job)).toEqual(['boom']);
  });
});
