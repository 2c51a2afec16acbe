import { expect } from 'vitest';
import type { Hono } from 'hono';
import type { Database } from '../../src/db/database.js';
import { buildSample, signSample } from '../../src/webhooks/samples.js';
import { consoleApp, type ConsoleApp } from '../console/console-app.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { seedDeliveries } from '../inbox/fixtures.js';
import { recordSighting } from '../../src/issues/issue-store.js';

/** Two people with their own tokens: alice may act, bob only reads. */
export const OPERATORS = {
  alice: 'alice-operator-token-for-tests-0123456789',
  bob: 'bob-viewer-token-for-tests-0123456789abcd',
} as const;

/** ADMIN_TOKENS for them, beside the tests' ADMIN_TOKEN (signing in as `admin`). */
export const ADMIN_TOKENS = `alice:operator:${OPERATORS.alice}, bob:viewer:${OPERATORS.bob}`;

/** The console's test app (a job `tick`, a handler `sync-crm`) with the two operators. */
export const operatorsApp = (db: Database): Promise<ConsoleApp> => consoleApp(db, { ADMIN_TOKENS });

/** A request to the admin API as `who`. */
export function api(app: Hono, who: keyof typeof OPERATORS, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return Promise.resolve(
    app.request(`/api${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATORS[who]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

/** Store a signed `auth` event through the real receiver; its id. */
export async function receiveEvent(console_: ConsoleApp, type = 'user.created'): Promise<number> {
  const body = JSON.stringify(buildSample('auth', type, undefined, console_.clock.now()));
  const res = await console_.app.request('/webhooks/auth', {
    method: 'POST',
    body,
    headers: signSample('auth', body, console_.config, { nowMs: console_.clock.now() }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number }).id;
}

/** A received event whose deliveries are dead: one a replay puts back. */
export async function deadEvent(console_: ConsoleApp, db: Database): Promise<number> {
  const id = await receiveEvent(console_);
  await seedDeliveries(db, createDefaultHandlers(), 'dead', { ids: [id] });
  return id;
}

/** A console session of `who` (through the login form) and its CSRF token. */
export async function consoleSession(app: Hono, who: keyof typeof OPERATORS): Promise<{ cookie: string; csrf: string }> {
  const res = await app.request('/admin/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: OPERATORS[who] }).toString(),
  });
  expect(res.status).toBe(303);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await app.request('/admin/jobs', { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

/** One audit entry as the tests compare them. */
export interface ListedEntry {
  operator: string;
  role: string;
  via: string;
  action: string;
  target: string | null;
  outcome: string;
  detail: string | null;
}

/** The audit as `GET /api/audit` lists it (read as alice), newest first. */
export async function listedAudit(app: Hono, query = ''): Promise<ListedEntry[]> {
  const res = await api(app, 'alice', 'GET', `/audit?limit=200${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: ListedEntry[] }).entries;
}

/** An open issue to acknowledge and resolve (the nightly job failing, seen at `at`): its id. */
export async function failingJobIssue(db: Database, at: Date): Promise<number> {
  await recordSighting(
    db,
    {
      kind: 'job_failing',
      subject: 'nightly',
      title: 'Job nightly fails',
      detail: 'x',
      seenAt: at,
      firstSeenAt: at,
      fingerprint: 'job_failing:nightly',
      occurrences: 1,
    },
    'i.occurrences',
  );
  const [issue] = await db.query<{ id: number }>('SELECT id FROM hookrun.issues WHERE fingerprint = $1', ['job_failing:nightly']);
  return issue!.id;
}
