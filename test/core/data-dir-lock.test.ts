import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME, lockDataDir } from '../../src/db/data-dir-lock.js';
import { ConfigError } from '../../src/errors.js';

describe('embedded data dir lock', () => {
  it('takes the lock, refuses a live holder with a message naming DATA_DIR, and releases', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookrun-lock-'));
    // A live process that is not us holds the lock.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, LOCK_FILE_NAME), String(holder.pid));
      expect(() => lockDataDir(dir)).toThrow(ConfigError);
      expect(() => lockDataDir(dir)).toThrow(/DATA_DIR .* is in use by another hookrun process \(pid \d+\)/);
    } finally {
      holder.kill('SIGKILL');
    }
    await new Promise((resolve) => holder.once('exit', resolve));
    // Its process is gone now: the stale lock is taken over.
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  });
});
