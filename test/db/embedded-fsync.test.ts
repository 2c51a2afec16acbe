import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { acknowledged, sendDelivery, stripeDelivery } from '../helpers/signed-deliveries.js';
import { REPO_ROOT, baseEnv, seedDataDir, spawnHookrun } from '../helpers/spawn-hookrun.js';
import { isHttpResponse, isWalSync, isWalWrite, readStraceLog, walSegment, walSyncedBefore } from '../helpers/strace-log.js';

const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));
if (!STRACE) {
  if (process.env.CI === 'true') throw new Error('CI=true but strace is missing: .ci/run should have installed it (apt-get install -y strace).');
  console.warn('\n  SKIPPED the embedded fsync test: no strace. Enable it with: sudo apt-get install -y strace\n');
}

const SEGMENT_BYTES = 16 * 1024 * 1024;
const MB = 1024 * 1024;
/** Deliveries of ~600 kB of incompressible data: 10 of them write more WAL than is left in the segment. */
const DELIVERIES = 10;
const SEGMENTS = /^[0-9A-F]{24}$/;

/**
 * Give a seeded data dir the WAL of a database that has run a while: three
 * segments written, a CHECKPOINT (the old segments are renamed to future
 * names, ready for reuse), then filled until 3-4 MB are left in the current
 * segment, so the deliveries switch segments. Returns the segment being
 * written and the alphabetically newest file in pg_wal.
 */
async function ageWal(pgdata: string): Promise<{ current: string; newest: string }> {
  const db = new PGlite(pgdata);
  const position = async () => Number((await db.query<{ pos: string }>(`SELECT (pg_current_wal_insert_lsn() - '0/0')::bigint::text AS pos`)).rows[0]!.pos);
  const fill = () => db.query(`INSERT INTO wal_filler (v) SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 32768)`); // 1 MB, stored uncompressed
  await db.query('CREATE TABLE wal_filler (v text)');
  await db.query('ALTER TABLE wal_filler ALTER v SET STORAGE EXTERNAL');
  const start = await position();
  while ((await position()) < start + 3 * SEGMENT_BYTES) await fill();
  await db.query('CHECKPOINT');
  while ((await position()) % SEGMENT_BYTES < SEGMENT_BYTES - 4 * MB) await fill();
  await db.query('TRUNCATE wal_filler');
  const current = (await db.query<{ name: string }>('SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS name')).rows[0]!.name;
  await db.close();
  const newest = readdirSync(join(pgdata, 'pg_wal'))
    .filter((name) => SEGMENTS.test(name))
    .sort()
    .at(-1)!;
  return { current, newest };
}

/** A signed Stripe delivery carrying ~600 kB of random (incompressible) text. */
const bigDelivery = (i: number) =>
  stripeDelivery({
    id: `evt_wal_${i}_${randomBytes(4).toString('hex')}`,
    object: 'event',
    type: 'test.wal_volume',
    data: { object: { blob: randomBytes(450_000).toString('base64') } },
  });

describe.skipIf(!STRACE)('an acknowledged event is on disk before its 2xx, after a checkpoint and across a segment switch', { timeout: 240_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'hookrun-fsync-'));
  const dataDir = join(root, 'data');
  let wal: { current: string; newest: string };
  beforeAll(async () => {
    await ensureDistBuilt();
    await seedDataDir(dataDir);
    wal = await ageWal(join(dataDir, 'pgdata'));
  }, 180_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('each 2xx follows a WAL fsync, and every WAL segment written before that fsync was fsynced after its last write; the stop checkpoint fsyncs pg_control (strace of the server)', async () => {
    expect(wal.newest > wal.current, `after a checkpoint, recycled segments lie ahead of ${wal.current}`).toBe(true);
    const log = join(root, 'strace.txt');
    const wrapper = [STRACE!, '-f', '-y', '--seccomp-bpf', '-s', '16', '-e', 'trace=fsync,fdatasync,write,pwrite64,writev,pwritev', '-o', log];
    const server = await spawnHookrun({ dataDir, wrapper, readyTimeoutMs: 60_000 });
    try {
      const marker = await fetch(`${server.url}/embedded-fsync-test-marker`); // its 404 in the trace marks where the deliveries begin
      expect(marker.status).toBe(404);
      for (let i = 0; i < DELIVERIES; i++) expect(acknowledged(await sendDelivery(server.url, bigDelivery(i), { timeoutMs: 30_000 }))).toBe(true);
    } finally {
      const hookrunPid = Number(/"pid":(\d+)/.exec(server.output())?.[1]);
      if (hookrunPid > 0) process.kill(hookrunPid, 'SIGTERM'); // strace exits with it
      await server.waitForExit(30_000).catch(() => server.stop(1_000));
    }

    const calls = readStraceLog(log);
    const start = calls.find((c) => isHttpResponse(c, '404'))!;
    const answers = calls.filter((c) => c.entry > start.entry && isHttpResponse(c, '2'));
    expect(answers).toHaveLength(DELIVERIES);
    const written = new Set(calls.filter((c) => c.entry > start.entry && isWalWrite(c)).map((c) => walSegment(c)!));
    expect(written.size, `the deliveries' WAL crossed a segment boundary (${[...written].join(', ')})`).toBeGreaterThanOrEqual(2);
    expect(written.has(wal.current), `the first delivery went to ${wal.current}`).toBe(true);

    const unsynced = answers.flatMap((answer, n) => {
      const { lastSync, segments } = walSyncedBefore(calls, n === 0 ? start : answers[n - 1]!, answer);
      if (!lastSync) return [`2xx #${n + 1}: no WAL fsync since the previous answer`];
      return segments.filter((s) => !s.synced).map((s) => `2xx #${n + 1}: ${s.segment} written, not fsynced`);
    });
    const fsynced = [...new Set(calls.filter((c) => c.entry > start.entry && isWalSync(c)).map((c) => c.file))];
    expect(unsynced, `fsynced after the marker: ${fsynced.join(', ')}`).toEqual([]);
    // The stop's checkpoint made its data files and pg_control durable before old WAL could be reused.
    expect(calls.some((c) => c.entry > start.entry && c.name === 'fsync' && c.file.endsWith('/global/pg_control'))).toBe(true);
  });
});

/** Run `hookrun migrate` under strace (fsync and fdatasync only), bounded; its exit code and every sync it made. */
function tracedMigrate(root: string, name: string, env: Record<string, string>): Promise<{ code: number; output: string; syncs: string[] }> {
  const log = join(root, `${name}.strace.txt`);
  const args = ['-f', '-y', '-e', 'trace=fsync,fdatasync', '-o', log, process.execPath, join(REPO_ROOT, 'dist', 'main.js'), 'migrate'];
  return new Promise((resolve) => {
    execFile(STRACE!, args, { cwd: REPO_ROOT, env: { ...baseEnv(), ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, output: stdout + stderr, syncs: readStraceLog(log).map((c) => `${c.name} ${c.file}`) });
    });
  });
}

describe.skipIf(!STRACE)('hookrun migrate opens the embedded database as start does (EMBEDDED_FSYNC)', { timeout: 240_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'hookrun-migrate-fsync-'));
  beforeAll(async () => {
    await ensureDistBuilt();
    // A project migration, so each run commits something of its own to the WAL.
    mkdirSync(join(root, 'project', 'migrations'), { recursive: true });
    writeFileSync(join(root, 'project', 'migrations', '0001_orders.sql'), 'CREATE TABLE orders (id int PRIMARY KEY);\n');
    for (const name of ['durable', 'off']) await seedDataDir(join(root, name));
  }, 180_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('fsyncs its WAL by default, and makes no fsync in DATA_DIR with EMBEDDED_FSYNC=off (strace of the command)', async () => {
    const project = join(root, 'project');
    const durable = await tracedMigrate(root, 'durable', { DATA_DIR: join(root, 'durable'), HOOKRUN_PROJECT: project });
    expect(durable.code, durable.output).toBe(0);
    expect(durable.output).toContain('applied migrations/0001_orders.sql');
    expect(durable.syncs.filter((s) => s.includes(`${join(root, 'durable')}/pgdata/pg_wal/`)).length).toBeGreaterThan(0);

    const off = await tracedMigrate(root, 'off', { DATA_DIR: join(root, 'off'), HOOKRUN_PROJECT: project, EMBEDDED_FSYNC: 'off' });
    expect(off.code, off.output).toBe(0);
    expect(off.output).toContain('applied migrations/0001_orders.sql');
    expect(off.syncs.filter((s) => s.includes(join(root, 'off')))).toEqual([]);
  });
});
