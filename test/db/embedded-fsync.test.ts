import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { REPO_ROOT, seedDataDir } from '../helpers/spawn-hookrun.js';

const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));
if (!STRACE) {
  if (process.env.CI === 'true') throw new Error('CI=true but strace is missing: .ci/run should have installed it (apt-get install -y strace).');
  console.warn('\n  SKIPPED the embedded fsync test: no strace. Enable it with: sudo apt-get install -y strace\n');
}

/** Write `events` through the real EventWriter on an embedded DATA_DIR under strace; the fsync and fdatasync calls it made. */
async function fsyncCalls(dataDir: string, events: number, fsync: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'hookrun-fsync-'));
  const script = join(dir, 'write.mjs');
  writeFileSync(
    script,
    `import { openDatabase } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'db', 'client.js'))};
     import { EventWriter } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'db', 'event-writer.js'))};
     const db = await openDatabase({ dataDir: ${JSON.stringify(dataDir)}, fsync: ${fsync} });
     const writer = new EventWriter(db);
     for (let i = 0; i < ${events}; i++) await writer.write({ source: 'payments', key: 'evt_fsync_' + ${fsync} + '_' + i, type: 'x', payloadJson: '{}' });
     await db.close();`,
  );
  const summary = join(dir, 'strace.txt');
  await new Promise<void>((resolve, reject) =>
    execFile(STRACE!, ['-f', '-c', '-e', 'trace=fsync,fdatasync', '-o', summary, process.execPath, script], { timeout: 60_000 }, (error, _out, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
    ),
  );
  const text = readFileSync(summary, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return [...text.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

describe.skipIf(!STRACE)('the embedded database keeps what it acknowledged across an OS crash', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'hookrun-fsync-data-'));
  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(join(root, 'on'));
    await seedDataDir(join(root, 'off'));
  }, 180_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('each acknowledged commit is followed by an fsync of the WAL (PGlite alone makes none); EMBEDDED_FSYNC=off makes none', async () => {
    expect(await fsyncCalls(join(root, 'on'), 5, true)).toBeGreaterThanOrEqual(5);
    expect(await fsyncCalls(join(root, 'off'), 5, false)).toBe(0);
  });
});
