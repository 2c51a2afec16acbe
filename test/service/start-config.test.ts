import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHookrun, seedDataDir } from '../helpers/spawn-hookrun.js';

describe('hookrun start refuses a broken configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-start-config-'));

  it.each([
    [{ crons: [{ path: '/cron/keep-alive', schedule: '61 * * * *' }] }, /crons\[0\]\.schedule "61 \* \* \* \*": minute must be 0-59/],
    [{ crons: [{ path: '/cron/no-such-job', schedule: '0 1 * * *' }] }, /crons\[0\]\.path "\/cron\/no-such-job".*no job file/i],
    [
      {
        crons: [
          { path: '/cron/keep-alive', schedule: '0 1 * * *' },
          { path: '/cron/keep-alive', schedule: '0 2 * * *' },
        ],
      },
      /crons\[1\].*duplicate/i,
    ],
  ])('platform.json %j → exit 78 naming the entry', async (platform, message) => {
    const dataDir = mkdtempSync(join(dir, 'data-'));
    await seedDataDir(dataDir);
    const file = join(dir, `platform-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(platform));
    const result = await runHookrun({ dataDir, env: { PLATFORM_CONFIG: file } });
    expect(result.code, result.output).toBe(78);
    expect(result.output).toMatch(message);
  });

  it('a wrong env value → exit 78 naming the setting', async () => {
    const result = await runHookrun({ dataDir: mkdtempSync(join(dir, 'data-')), env: { PORT: 'eighty' } });
    expect(result.code).toBe(78);
    expect(result.output).toContain('PORT="eighty" is not valid');
  });
});
