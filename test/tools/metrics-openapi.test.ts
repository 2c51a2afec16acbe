import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { SECRETS } from '../helpers/config.js';
import { PACKAGE_VERSION } from '../helpers/package-version.js';
import { createMetricsRoute, METRICS_RENDER_MS, METRICS_SAMPLE_MS } from '../../src/http/metrics.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { createToolsApp, postSample, type ToolsApp } from './tools-app.js';

const METRICS_TOKEN = 'metrics-token-for-tests-32-characters';
const scraper = { headers: { authorization: `Bearer ${METRICS_TOKEN}` } };

describe('GET /metrics and GET /openapi.json', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db, { METRICS_TOKEN });
  });
  afterAll(async () => testDb?.close());

  it('serves Prometheus text with received, rejected, cron and by-status series sampled at scrape time', async () => {
    await postSample(tools, 'auth', 'user.created');
    await postSample(tools, 'auth', 'user.updated');
    await tools.app.request('/webhooks/auth', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await testDb.db.query(`UPDATE hookrun.webhook_events SET status = 'dead' WHERE id = (SELECT min(id) FROM hookrun.webhook_events)`);
    await tools.app.request('/cron/tick', { method: 'POST', headers: { authorization: `Bearer ${SECRETS.cron}` } });

    const res = await tools.app.request('/metrics', scraper);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('hookrun_events_received_total{source="auth",outcome="accepted",reason=""} 2');
    expect(text).toContain('hookrun_events_received_total{source="auth",outcome="rejected",reason="missing_signature"} 1');
    expect(text).toMatch(/hookrun_events\{status="pending"\} 1\n/);
    expect(text).toMatch(/hookrun_events\{status="dead"\} 1\n/);
    expect(text).toMatch(/hookrun_events\{status="failed"\} 0\n/);
    expect(text).toMatch(/hookrun_cron_runs_total\{job="tick",trigger="http",status="succeeded"\} 1/);
    expect(text).toContain('# TYPE hookrun_event_processing_seconds histogram');
    expect(text).toContain('# TYPE hookrun_cron_lag_seconds histogram');
  });

  it('samples the counts at most every 5 s, with one query in flight however many scrapes come at once', async () => {
    let now = 0;
    let counted = 0;
    let status = 'processed';
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const route = createMetricsRoute({
      metrics: new Metrics(),
      log: silentLogger,
      token: METRICS_TOKEN,
      sampleTimeoutMs: 1000,
      now: () => now,
      countEventsByStatus: async () => {
        counted++;
        await gate; // a slow count: every scrape meanwhile waits for this one instead of starting its own
        return { [status]: 2 };
      },
    });
    const scrape = async () => (await route.request('/metrics', scraper)).text();
    const first = Array.from({ length: 50 }, scrape);
    release();
    for (const text of await Promise.all(first)) expect(text).toMatch(/hookrun_events\{status="processed"\} 2\n/);
    expect(counted).toBe(1);
    status = 'dead';
    now += METRICS_SAMPLE_MS - 1;
    expect(await scrape()).toMatch(/hookrun_events\{status="processed"\} 2\n/); // the sample still serves
    expect(counted).toBe(1);
    now += METRICS_RENDER_MS; // past the sample's 5 s, and past the rendered text's second
    expect(await scrape()).toMatch(/hookrun_events\{status="dead"\} 2\n/);
    expect(counted).toBe(2);
  });

  it('describes every route the app serves, with its method, as of the version package.json names', async () => {
    const doc = (await (await tools.app.request('/openapi.json')).json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, unknown>>;
    };
    expect([doc.openapi, doc.info.version]).toEqual(['3.1.0', PACKAGE_VERSION]);
    const served = (await tools.routes())
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => ({ method: r.method.toLowerCase(), path: r.path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1') }));
    expect(served.length).toBeGreaterThan(20);
    const missing = served.filter((r) => !doc.paths[r.path]?.[r.method]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`));
    const extra = documented.filter((d) => !served.some((r) => `${r.method} ${r.path}` === d));
    expect(extra).toEqual([]);
  });

  it('lists every error code a receiver can answer', async () => {
    const doc = (await (await tools.app.request('/openapi.json')).json()) as {
      paths: Record<string, { post?: { responses: Record<string, { description: string }> } }>;
    };
    const responses = JSON.stringify(doc.paths['/webhooks/payments']!.post!.responses);
    for (const code of [
      'missing_signature',
      'invalid_signature',
      'timestamp_out_of_tolerance',
      'invalid_payload',
      'payload_too_large',
      'request_timeout',
      'unsupported_media_type',
      'not_configured',
      'unavailable',
    ]) {
      expect(responses).toContain(code);
    }
  });

  it('serves the same document as a page at /docs: every path in it, no script, no external asset', async () => {
    const res = await tools.app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await res.text();
    const document = (await (await tools.app.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    for (const path of Object.keys(document.paths)) expect(page).toContain(`<code>${path}</code>`);
    expect(page).not.toMatch(/<script|https?:\/\/(?!localhost)[a-z]/i);
    expect(page).toContain('integer, 1–200, default 50'); // the events limit, from the zod schema
  });
});
