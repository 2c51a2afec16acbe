import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME, lockDataDir } from '../../src/db/data-dir-lock.js';
import { ConfigError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/spawn-hookrun.js';

/** Another process that takes the lock with the real code and holds it until killed. */
async function startHolder(dir: string) {
  const script = `import(${JSON.stringify(join(REPO_ROOT, 'src', 'db', 'data-dir-lock.ts'))}).then((m) => m.lockDataDir(${JSON.stringify(dir)})).then(() => { console.log('locked'); setInterval(() => undefined, 60_000); });`;
  const holder = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (d) => String(d).includes('locked') && resolve());
    holder.once('exit', (code) => reject(new Error(`the holder exited ${code}`)));
  });
  return holder;
}

describe('embedded data dir lock', () => {
  it(
    'refuses a live holder with a message naming DATA_DIR; after the holder is killed with -9 the kernel frees the lock; release frees it',
    { timeout: 30_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hookrun-lock-'));
      const holder = await startHolder(dir);
      try {
        expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(holder.pid));
        await expect(lockDataDir(dir)).rejects.toThrow(ConfigError);
        await expect(lockDataDir(dir)).rejects.toThrow(new RegExp(`DATA_DIR ${dir} is in use by another hookrun process \\(pid ${holder.pid}`));
      } finally {
        holder.kill('SIGKILL');
      }
      await new Promise((resolve) => holder.once('exit', resolve));
      // Its flock child sees its pipe close and ends: the lock is free within moments (bounded wait, no fixed sleep).
      let lock;
      for (let attempt = 0; !lock; attempt++) {
        try {
          lock = await lockDataDir(dir);
        } catch (error) {
          if (attempt >= 100 || !(error instanceof ConfigError)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(process.pid));
      await expect(lockDataDir(dir)).rejects.toThrow(/is in use/);
      await lock.release();
      expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe('');
      const again = await lockDataDir(dir); // free at once after release
      await again.release();
    },
  );
});
