import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { pollUntil, REPO_ROOT, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** A handler whose first attempt hangs (a call that never answers); later attempts finish at once. */
const HANGING_HANDLER = `import { defineHandler } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))};
export default defineHandler({
  on: ['database:INSERT:profiles'],
  async run(event, ctx) {
    if (ctx.attempt === 1) {
      ctx.log.info('first attempt hangs');
      await new Promise((resolve) => setTimeout(resolve, 120_000));
    }
    ctx.log.info({ attempt: ctx.attempt }, 'profile synced');
  },
});
`;

describe('an embedded hookrun killed mid-handler', () => {
  let dir: string;
  const started: HookrunProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hookrun-takeover-'));
    await seedDataDir(join(dir, 'data'));
    mkdirSync(join(dir, 'project', 'handlers'), { recursive: true });
    writeFileSync(join(dir, 'project', 'handlers', 'profile-synced.ts'), HANGING_HANDLER);
  });
  afterAll(async () => {
    for (const proc of started) await proc.stop(5_000);
    await rm(dir, { recursive: true, force: true });
  });

  it('leaves nothing a restart waits for: the delivery it was running is taken over at start, not after LEASE_SECONDS', { timeout: 120_000 }, async () => {
    // A lease of 10 minutes: without the take-over the restarted process would wait that long.
    const options = { dataDir: join(dir, 'data'), env: { HOOKRUN_PROJECT: join(dir, 'project'), LEASE_SECONDS: '600', HANDLER_TIMEOUT_SECONDS: '300' } };
    const first = await spawnHookrun(options);
    started.push(first);
    const change = { type: 'INSERT', table: 'profiles', schema: 'public', record: { id: 7 }, old_record: null };
    const stored = await fetch(`${first.url}/webhooks/database`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.database}`, 'content-type': 'application/json' },
      body: JSON.stringify(change),
    });
    expect(stored.status).toBe(200);
    await pollUntil('the first attempt running', 30_000, () => (first.output().includes('first attempt hangs') ? true : undefined));
    first.kill('SIGKILL');
    await first.waitForExit(10_000);

    const next = await spawnHookrun(options);
    started.push(next);
    await pollUntil('the second attempt', 60_000, () => (next.output().includes('"attempt":2') ? true : undefined));
    expect(next.output()).toContain('deliveries a previous run left running are taken over now');
    await pollUntil('the event processed', 10_000, async () => {
      const res = await fetch(`${next.url}/api/events?source=database`, { headers: { authorization: `Bearer ${SECRETS.admin}` } });
      const { events } = (await res.json()) as { events: Array<{ status: string }> };
      return events[0]?.status === 'processed' ? true : undefined;
    });
  });
});
