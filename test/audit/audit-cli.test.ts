import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../src/db/audit.js';
import { createDefaultHandlers } from '../../src/inbox/handlers/defaults.js';
import { runCliInProcess } from '../helpers/cli.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/db.js';
import { REPO_ROOT, baseEnv } from '../helpers/spawn-hookrun.js';
import { seedDeliveries, storeEvent } from '../inbox/fixtures.js';
import { ADMIN_TOKENS, OPERATORS, failingJobIssue } from './operators-app.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('the CLI signs in with a named token, and the audit names who ran it (PostgreSQL)', () => {
  let testDb: TestDatabase;
  let event: number;
  let issue: number;
  beforeAll(async () => {
    testDb = await createPostgresDatabase();
    event = await storeEvent(testDb.db, 'auth', 'user.created', { data: { id: 'user_1' } });
    await seedDeliveries(testDb.db, createDefaultHandlers(), 'dead');
    issue = await failingJobIssue(testDb.db, new Date());
  }, 120_000);
  afterAll(() => testDb?.close());

  const hookrun = (args: string[], env: Record<string, string | undefined>) =>
    runCliInProcess(
      args,
      { ...baseEnv(), DATABASE_URL: testDb.url!, PLATFORM_CONFIG: join(REPO_ROOT, 'platform.json'), LOG_LEVEL: 'warn', ADMIN_TOKENS, ...env },
      REPO_ROOT,
    );

  it("records an operator's commands under their name, via cli; refuses a viewer's and an unknown token", async () => {
    const replayed = await hookrun(['events', 'replay', String(event)], { HOOKRUN_ADMIN_TOKEN: OPERATORS.alice });
    expect(replayed.code, replayed.stderr).toBe(0);
    const resolved = await hookrun(['issues', 'resolve', String(issue), '--json'], { HOOKRUN_ADMIN_TOKEN: OPERATORS.alice });
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ status: 'resolved', resolvedBy: 'alice via cli' });

    const viewer = await hookrun(['issues', 'ack', String(issue)], { HOOKRUN_ADMIN_TOKEN: OPERATORS.bob });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('bob signs in as a viewer, who reads but may not act: issue.acknowledge needs the operator role');
    const listed = await hookrun(['issues', 'list', '--status', 'resolved'], { HOOKRUN_ADMIN_TOKEN: OPERATORS.bob });
    expect(listed.code, listed.stderr).toBe(0);

    const stranger = await hookrun(['issues', 'list'], { HOOKRUN_ADMIN_TOKEN: 'stranger-token-that-nobody-configured-0123' });
    expect(stranger.code).toBe(78);
    expect(stranger.stderr).toContain('HOOKRUN_ADMIN_TOKEN is neither ADMIN_TOKEN nor a token of ADMIN_TOKENS here');
    expect(stranger.stderr + viewer.stderr).not.toContain(OPERATORS.bob);

    const entries = (await listAudit(testDb.db, { limit: 10 })).reverse();
    expect(entries.map((e) => [e.operator, e.role, e.via, e.action, e.target, e.outcome])).toEqual([
      ['alice', 'operator', 'cli', 'event.replay', `event ${event}`, 'ok'],
      ['alice', 'operator', 'cli', 'issue.resolve', `issue ${issue}`, 'ok'],
      ['bob', 'viewer', 'cli', 'issue.acknowledge', `issue ${issue}`, 'refused'],
    ]);
    const [attempt] = await testDb.db.query<{ actor: string }>(`SELECT actor FROM hookrun.event_attempts WHERE outcome = 'replayed'`);
    expect(attempt!.actor).toMatch(/^alice via cli \(cli:.+@.+\)$/);
  });
});
