import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/db.js';
import { createToolsApp, postSample, type ToolsApp } from '../tools/tools-app.js';

/** Secrets the settings page must never show, each a real value the config reads. */
const EXTRA_SECRETS = {
  STRIPE_SECRET_KEY: 'sk_test_settings_page_must_hide_this_key',
  ALERT_WEBHOOK_URL: 'https://hooks.slack.example/services/T000/B000/alert-path-secret',
  GITHUB_TOKEN: 'ghp_settingspagehidesthistoken000000000',
  METRICS_TOKEN: 'metrics-token-for-the-settings-page-test-0000',
  HOOKRUN_REMOTE_TOKEN: 'remote-token-the-settings-page-hides-00000',
  DATABASE_URL: 'postgres://hookrun:main-db-password-hidden@db.internal:5432/app',
  CHANGES_DATABASE_URL: 'postgres://replicator:changes-db-password-hidden@product.internal:5432/app',
  PUBLIC_URL: 'https://api.example.com',
  LOG_LEVEL: 'silent',
};

describe('console over HTTP: redirects, stream, CSP, settings', () => {
  let testDb: TestDatabase;
  let tools: ToolsApp;
  let cookie: string;
  beforeAll(async () => {
    testDb = await createPgliteDatabase();
    tools = await createToolsApp(testDb.db, EXTRA_SECRETS);
    const res = await tools.app.request('/admin/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.admin }).toString(),
    });
    cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  });
  afterAll(async () => testDb?.close());

  const get = (path: string, headers: Record<string, string> = { cookie }) => tools.app.request(path, { headers });

  it('sends an old event-list URL on to /admin/events with the same query (303), and keeps /admin and ?range as the overview', async () => {
    for (const query of ['?status=dead', '?source=auth&type=user.created', '?q=evt_1', '?parked=1', '?cursor=42&status=failed', '?status=dead&live=1']) {
      const res = await get(`/admin${query}`);
      expect(res.status, query).toBe(303);
      expect(res.headers.get('location')).toBe(`/admin/events${query}`);
    }
    for (const path of ['/admin', '/admin?range=24h', '/admin?range=7d']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<h1>Overview</h1>');
    }
  });

  it('serves the stream only with a session, and the script as a file under the CSP', async () => {
    const anonymous = await get('/admin/stream', {});
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/admin/login');
    expect((await get('/admin/stream', { cookie: `hookrun_admin=${SECRETS.admin}` })).status).toBe(303);
    expect((await get('/admin/assets/console.js', {})).status).toBe(303);

    const controller = new AbortController();
    const stream = await tools.app.request('/admin/stream', { headers: { cookie }, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: ready');
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const script = await get('/admin/assets/console.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    const text = await script.text();
    expect(text).toContain("new EventSource(root + 'stream'"); // root: the script's own folder's parent, /admin/ here
    expect(text).not.toMatch(/innerHTML|insertAdjacentHTML|document\.write/);
  });

  it('sends a CSP that allows only our own script file, and no page carries inline script', async () => {
    await postSample(tools, 'auth', 'user.created');
    for (const path of ['/admin', '/admin/handlers', '/admin/jobs', '/admin/jobs/tick', '/admin/mirrors', '/admin/settings', '/admin/login']) {
      const res = await get(path, path === '/admin/login' ? {} : { cookie });
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline[^;]*;?\s*$|script-src[^;]*unsafe/);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      const page = await res.text();
      const scripts = [...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
      for (const [tag, inline] of scripts) {
        expect(tag, path).toContain('src="/admin/assets/console.js"');
        expect(inline, path).toBe('');
      }
      expect(page, path).not.toMatch(/\son[a-z]+="/);
    }
  });

  it('marks live regions on the overview, handlers and jobs pages', async () => {
    const overview = await (await get('/admin')).text();
    expect(overview).toMatch(/<body data-live>/);
    expect(overview).toMatch(/id="counts" data-live-region/);
    expect(overview).toMatch(/id="chart-region" data-live-region/);
    expect(await (await get('/admin/handlers')).text()).toMatch(/id="handlers-region" data-live-region/);
    expect(await (await get('/admin/jobs')).text()).toMatch(/id="jobs-region" data-live-region/);
    expect(await (await get('/admin/settings')).text()).not.toContain('<body data-live>');
  });

  it('shows every setting with its source, and no part of any secret', async () => {
    const res = await get('/admin/settings');
    const page = await res.text();
    expect(page).toMatch(/data-setting="PUBLIC_URL"><td><code>PUBLIC_URL<\/code><\/td><td>https:\/\/api\.example\.com<\/td><td>env<\/td>/);
    expect(page).toMatch(/data-setting="MAX_ATTEMPTS"><td><code>MAX_ATTEMPTS<\/code><\/td><td>10<\/td><td>default<\/td>/);
    for (const name of [
      'ADMIN_TOKEN',
      'CRON_SECRET',
      'STRIPE_SECRET_KEY',
      'ALERT_WEBHOOK_URL',
      'GITHUB_TOKEN',
      'PAYMENTS_WEBHOOK_SECRET',
      'DATABASE_URL',
      'CHANGES_DATABASE_URL',
    ])
      expect(page, name).toMatch(new RegExp(`data-setting="${name}" data-secret="set"`));
    expect(page).toMatch(/data-setting="DATABASE_DIRECT_URL" data-secret="not set"/);
    const secrets = [...Object.values(SECRETS), ...Object.values(EXTRA_SECRETS).filter((v) => v !== 'https://api.example.com' && v !== 'silent')];
    for (const secret of secrets) {
      expect(page, secret).not.toContain(secret);
      // No fragment of it either: its last 12 characters.
      expect(page, secret).not.toContain(secret.slice(-12));
    }
    expect(page).not.toContain('main-db-password-hidden');
    expect(page).not.toContain('changes-db-password-hidden');
    expect(page).not.toContain('db.internal');
    expect(page).not.toContain('alert-path-secret');
  });
});
