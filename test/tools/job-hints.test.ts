import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminRequestError } from '../../src/cli/admin-client.js';
import { explainUnknownJob } from '../../src/cli/cron.js';
import { unbuiltJobHint } from '../../src/cron/registry.js';

describe('a new job file that hookrun does not see yet', () => {
  const root = mkdtempSync(join(tmpdir(), 'hookrun-jobhint-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'dist', 'cron', 'jobs'), { recursive: true });
  mkdirSync(join(root, 'src', 'cron', 'jobs'), { recursive: true });
  writeFileSync(join(root, 'src', 'cron', 'jobs', 'hello.ts'), 'export default {}');
  const distJobs = new URL(`${pathToFileURL(join(root, 'dist', 'cron', 'jobs')).href}/`);

  it('running from dist/ with src/cron/jobs/<job>.ts present: says to build, not that the file is missing', () => {
    expect(unbuiltJobHint('hello', distJobs, '.js')).toMatch(
      /src\/cron\/jobs\/hello\.ts exists but is not built yet: run `npm run build` \(and restart a running hookrun\)/,
    );
    expect(unbuiltJobHint('nope', distJobs, '.js')).toBeUndefined();
    expect(unbuiltJobHint('hello', distJobs, '.ts')).toBeUndefined(); // npm run dev runs the source: nothing to build
  });

  it('a running server that answers 404 for a job this build has: says to restart it', async () => {
    const notFound = new AdminRequestError(404, 'not_found', 'No cron job "keep-alive".');
    const explained = (await explainUnknownJob(notFound, 'keep-alive', 'remote')) as Error;
    expect(explained.message).toMatch(/loaded its jobs before it was built: restart the server/);
    expect(await explainUnknownJob(notFound, 'no-such-job', 'remote')).toBe(notFound);
    expect(await explainUnknownJob(notFound, 'keep-alive', 'local')).toBe(notFound);
  });
});
