import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NextRoute } from '../../src/next/route.js';
import { buildSample } from '../../src/webhooks/samples.js';
import { SECRETS } from '../helpers/config.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { callMounted, MOUNT, mountedRoute, ORIGIN } from './console-mounted.js';

/** Every URL a page points to: links, forms, scripts. */
const urlsOf = (page: string) => [...page.matchAll(/\s(?:href|action|src)="([^"]*)"/g)].map((m) => m[1]!);

/** A form's CSRF token, as the page carries it. */
const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)![1]!;

const form = (fields: Record<string, string>, cookie?: string): RequestInit => ({
  method: 'POST',
  headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
  body: new URLSearchParams(fields).toString(),
});

describe('the console under hookrun/next at a mount path (app/api/hookrun/[...path])', () => {
  let testDb: TestDatabase;
  let project: string;
  let route: NextRoute;
  let cookie: string;
  let eventId: number;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    project = mkdtempSync(join(tmpdir(), 'hookrun-mounted-console-'));
    mkdirSync(join(project, 'jobs')); // a project without jobs of its own: the shipped ones and the database receiver's handler
    route = mountedRoute(testDb.url!, project);
    const stored = await callMounted(route, `${MOUNT}/webhooks/database`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
      body: JSON.stringify(buildSample('database', 'INSERT')),
    });
    expect(stored.status, await stored.clone().text()).toBe(200);
    eventId = ((await stored.json()) as { id: number }).id;
  }, 60_000);
  afterAll(async () => {
    await testDb?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('logs in at the mount: the login redirect, the form, the session cookie scoped to the mount, and back to the overview', async () => {
    const anonymous = await callMounted(route, `${MOUNT}/admin/events`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe(`${MOUNT}/admin/login`);

    const login = await callMounted(route, anonymous.headers.get('location')!);
    expect(login.status).toBe(200);
    const loginPage = await login.text();
    expect(loginPage).toContain(`action="${MOUNT}/admin/login"`);
    for (const url of urlsOf(loginPage)) expect(url.startsWith(`${MOUNT}/`), url).toBe(true);

    const loggedIn = await callMounted(route, `${MOUNT}/admin/login`, form({ token: SECRETS.admin }));
    expect(loggedIn.status).toBe(303);
    expect(loggedIn.headers.get('location')).toBe(`${MOUNT}/admin`);
    const setCookie = loggedIn.headers.get('set-cookie')!;
    expect(setCookie).toMatch(new RegExp(`; Path=${MOUNT}/admin(;|$)`));
    expect(setCookie).toContain('HttpOnly');
    cookie = setCookie.split(';')[0]!;
  });

  it('serves every page with its links, forms and script under the mount', async () => {
    for (const path of [
      '/admin',
      '/admin/events',
      `/admin/events/${eventId}`,
      '/admin/handlers',
      '/admin/jobs',
      '/admin/issues',
      '/admin/replays',
      '/admin/settings',
    ]) {
      const res = await callMounted(route, `${MOUNT}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      const page = await res.text();
      expect(page, path).toContain(`<script src="${MOUNT}/admin/assets/console.js" defer></script>`);
      const outside = urlsOf(page).filter((url) => url.startsWith('/') && !url.startsWith(`${MOUNT}/admin`));
      expect(outside, path).toEqual([]);
    }
    const events = await (await callMounted(route, `${MOUNT}/admin/events`, { headers: { cookie } })).text();
    expect(events).toContain(`href="${MOUNT}/admin/events/${eventId}"`);
    expect(events).toContain(`action="${MOUNT}/admin/events"`);
  });

  it('serves the script, which finds the stream from its own URL, and the stream itself', async () => {
    const script = await callMounted(route, `${MOUNT}/admin/assets/console.js`, { headers: { cookie } });
    expect(script.status).toBe(200);
    const text = await script.text();
    expect(text).not.toContain("'/admin/");
    expect(text).toContain('document.currentScript.src');

    const controller = new AbortController();
    const stream = await callMounted(route, `${MOUNT}/admin/stream`, { headers: { cookie }, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: ready');
    controller.abort();
    await reader.cancel().catch(() => undefined);
  });

  it("posts a form (replay) and comes back to the event's page under the mount; logging out clears the mount's cookie", async () => {
    const detail = await (await callMounted(route, `${MOUNT}/admin/events/${eventId}`, { headers: { cookie } })).text();
    expect(detail).toContain(`action="${MOUNT}/admin/events/${eventId}/replay"`);
    const replayed = await callMounted(route, `${MOUNT}/admin/events/${eventId}/replay`, form({ csrf: csrfOf(detail) }, cookie));
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe(`${MOUNT}/admin/events/${eventId}?replayed=1`);

    const out = await callMounted(route, `${MOUNT}/admin/logout`, form({ csrf: csrfOf(detail) }, cookie));
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe(`${MOUNT}/admin/login`);
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^hookrun_admin=;.*Path=${MOUNT}/admin`));
    const after = await callMounted(route, `${MOUNT}/admin`, { headers: { cookie } });
    expect(after.headers.get('location')).toBe(`${MOUNT}/admin/login`);
  });

  it('a mount path from a hostile URL (a dynamic segment before the catch-all) cannot add cookie attributes or markup', async () => {
    const hostile = `/t;Domain=evil.example,$'"><x`;
    const url = `${ORIGIN}${hostile}/admin/login`;
    const login = await route.POST(new Request(url, form({ token: SECRETS.admin })), { params: Promise.resolve({ path: ['admin', 'login'] }) });
    expect(login.status).toBe(303);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).not.toMatch(/;\s*Domain=/i); // only inside the encoded Path
    const mount = new URL(url).pathname.slice(0, -'/admin/login'.length);
    expect(setCookie).toContain(`Path=${mount.replace(/[;,]/g, encodeURIComponent)}/admin`);
    const page = await (await route.GET(new Request(`${ORIGIN}${hostile}/admin/login`), { params: Promise.resolve({ path: ['admin', 'login'] }) })).text();
    expect(page).not.toContain('<x');
    expect(page).toContain(`action="${mount.replace(/[;,]/g, encodeURIComponent)}/admin/login"`);
  });

  it('leaves the console at /admin as it was when served at the root (hookrun start)', async () => {
    const root = await route.GET(new Request(`${ORIGIN}/admin`, { redirect: 'manual' }));
    expect(root.status).toBe(303);
    expect(root.headers.get('location')).toBe('/admin/login');
  });
});
