import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME, lockDataDir } from '../../src/db/data-dir-lock.js';
import { ConfigError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

/** Another process that tries the lock with the real code (PATH as given, else ours): it holds it until killed, or exits saying why not. */
async function startHolder(dir: string, path = process.env.PATH) {
  const script = `import(${JSON.stringify(join(REPO_ROOT, 'src', 'db', 'data-dir-lock.ts'))}).then((m) => m.lockDataDir(${JSON.stringify(dir)})).then(() => { console.log('locked'); setInterval(() => undefined, 60_000); }, (error) => console.log('refused: ' + error.message));`;
  const holder = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: path },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const answer = await new Promise<string>((resolve, reject) => {
    holder.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    holder.once('exit', (code) => (out ? resolve(out.trim()) : reject(new Error(`the holder exited ${code}`))));
  });
  return Object.assign(holder, { answer });
}

/** Take the lock in this process, retrying (bounded, no fixed sleep) while a killed holder's locker child has not yet seen its pipe close. */
async function lockOnceFree(dir: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await lockDataDir(dir);
    } catch (error) {
      if (attempt >= 100 || !(error instanceof ConfigError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const PERL = ['/usr/bin/perl', '/bin/perl'].find((p) => existsSync(p));
if (!PERL) {
  if (process.env.CI === 'true') throw new Error('CI=true but perl is missing: Debian and Ubuntu ship it (perl-base), so it should be there.');
  console.warn('\n  SKIPPED the data dir lock test without flock: no perl (macOS and Debian ship it). Enable it with: sudo apt-get install -y perl\n');
}

describe('embedded data dir lock', () => {
  it(
    'refuses a live holder with a message naming DATA_DIR; after the holder is killed with -9 the kernel frees the lock; release frees it',
    { timeout: 30_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hookrun-lock-'));
      const holder = await startHolder(dir);
      expect(holder.answer).toBe('locked');
      try {
        expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(holder.pid));
        await expect(lockDataDir(dir)).rejects.toThrow(ConfigError);
        await expect(lockDataDir(dir)).rejects.toThrow(new RegExp(`DATA_DIR ${dir} is in use by another hookrun process \\(pid ${holder.pid}`));
      } finally {
        holder.kill('SIGKILL');
      }
      await new Promise((resolve) => holder.once('exit', resolve));
      // Its flock child sees its pipe close and ends: the lock is free within moments (bounded wait, no fixed sleep).
      const lock = await lockOnceFree(dir);
      expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(process.pid));
      await expect(lockDataDir(dir)).rejects.toThrow(/is in use/);
      await lock.release();
      expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe('');
      const again = await lockDataDir(dir); // free at once after release
      await again.release();
    },
  );

  it.skipIf(!PERL)(
    'without `flock` on PATH (macOS) perl holds the same kernel lock: each refuses the other, kill -9 frees it; with neither, the refusal names the fix',
    { timeout: 30_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hookrun-lock-perl-'));
      const perlOnly = mkdtempSync(join(tmpdir(), 'hookrun-path-perl-'));
      symlinkSync(PERL!, join(perlOnly, 'perl'));
      const holder = await startHolder(dir, perlOnly);
      try {
        expect(holder.answer).toBe('locked');
        expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(holder.pid));
        await expect(lockDataDir(dir)).rejects.toThrow(new RegExp(`DATA_DIR ${dir} is in use by another hookrun process \\(pid ${holder.pid}`));
      } finally {
        holder.kill('SIGKILL');
      }
      await new Promise((resolve) => holder.once('exit', resolve));
      const lock = await lockOnceFree(dir); // with `flock`: the perl child saw its pipe close and let go
      try {
        const refused = await startHolder(dir, perlOnly);
        expect(refused.answer).toMatch(/^refused: DATA_DIR .* is in use by another hookrun process/);
      } finally {
        await lock.release();
      }
      const empty = mkdtempSync(join(tmpdir(), 'hookrun-path-empty-'));
      const nothing = await startHolder(dir, empty);
      for (const made of [dir, perlOnly, empty]) rmSync(made, { recursive: true, force: true });
      expect(nothing.answer).toMatch(/neither is on PATH\. Install one \(macOS: brew install flock; Alpine: apk add util-linux\)/);
    },
  );
});
