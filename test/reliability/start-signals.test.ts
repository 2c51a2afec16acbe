import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDistBuilt } from '../helpers/build-dist.js';
import { freePort } from '../helpers/free-port.js';
import { pollUntil } from '../helpers/poll.js';
import { baseEnv, REPO_ROOT, seedDataDir } from '../helpers/spawn-hookrun.js';

const MAIN_JS = join(REPO_ROOT, 'dist', 'main.js');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Whether a process is still there (a zombie waiting for a reaper is not: it serves nothing). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Each production start form the docs name, started as a container's CMD or
 * systemd's ExecStart would start it. `waits`: the process started ends only
 * once hookrun has drained; otherwise (npm runs hookrun through `sh -c`, and
 * dash does not pass the signal on) it ends at once and hookrun, orphaned,
 * notices and drains on its own.
 */
const FORMS: Array<{ name: string; command: string[]; waits: boolean; script?: string }> = [
  { name: 'node node_modules/hookrun/dist/main.js start', command: ['node', 'node_modules/hookrun/dist/main.js', 'start'], waits: true },
  { name: 'node_modules/.bin/hookrun start', command: ['node_modules/.bin/hookrun', 'start'], waits: true },
  { name: 'npm start (the script hookrun init writes)', command: ['npm', 'start'], waits: true },
  { name: 'npx hookrun start', command: ['npx', 'hookrun', 'start'], waits: false },
  { name: 'npm start with an older init\'s script, "hookrun start"', command: ['npm', 'start'], waits: false, script: 'hookrun start' },
];

describe('the documented production start forms on SIGTERM: the process started exits, and no hookrun is left serving', { timeout: 180_000 }, () => {
  const project = join(mkdtempSync(join(tmpdir(), 'hookrun-signals-')), 'my-hookrun');
  const servers: number[] = [];
  const started: ChildProcess[] = [];
  let initScript = '';

  beforeAll(async () => {
    await ensureDistBuilt();
    await new Promise<void>((resolve, reject) => execFile(process.execPath, [MAIN_JS, 'init', project], (error) => (error ? reject(error) : resolve())));
    // What `npm install` gives the project, without the registry: hookrun (this checkout, built) and its bin.
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO_ROOT, join(project, 'node_modules', 'hookrun'), 'dir');
    symlinkSync('../hookrun/dist/main.js', join(project, 'node_modules', '.bin', 'hookrun'));
    initScript = (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  }, 120_000);

  afterAll(() => {
    for (const pid of servers) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const child of started) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    rmSync(join(project, '..'), { recursive: true, force: true });
  });

  for (const [index, form] of FORMS.entries()) {
    it(`${form.name}: ${form.waits ? 'exits once hookrun has drained' : 'exits, and hookrun drains and exits after it'}`, async () => {
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { scripts: { start: string } };
      manifest.scripts.start = form.script ?? initScript;
      writeFileSync(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
      // A data dir of its own: a hookrun one form left serving would hold the next one's.
      const dataDir = join(project, `.data-${index}`);
      await seedDataDir(dataDir);
      const port = await freePort();
      let output = '';
      // Its own process group, as under a container runtime or systemd; the signal goes to this one process only.
      const child = spawn(form.command[0]!, form.command.slice(1), {
        cwd: project,
        env: { ...baseEnv(), PORT: String(port), DATA_DIR: dataDir, SCHEDULER: 'off' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      started.push(child);
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

      const server = await pollUntil(`the listening line of ${form.name}`, START_TIMEOUT_MS, () => {
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before listening:\n${output}`);
        const line = output.split('\n').find((l) => l.includes('hookrun listening on'));
        return line ? (JSON.parse(line) as { pid: number }).pid : undefined;
      });
      servers.push(server);
      await pollUntil('/ready 200', START_TIMEOUT_MS, async () =>
        (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status === 200 ? true : undefined,
      );

      process.kill(child.pid!, 'SIGTERM');
      await pollUntil(`${form.name} (pid ${child.pid}) to exit`, STOP_TIMEOUT_MS, () =>
        child.exitCode !== null || child.signalCode !== null ? true : undefined,
      );
      if (form.waits) {
        expect(alive(server), `hookrun (pid ${server}) still running when ${form.name} exited`).toBe(false);
        expect(output).toContain('"msg":"stopped"');
      }
      // npm did not pass the signal on: hookrun stopped because the npm that started it was gone
      if (!form.waits)
        await pollUntil('the launcher-exited line', STOP_TIMEOUT_MS, () => (output.includes('the npm that started hookrun has exited') ? true : undefined));
      await pollUntil(`hookrun (pid ${server}) to exit after ${form.name} did`, STOP_TIMEOUT_MS, () => (alive(server) ? undefined : true));
      expect(output).toContain('"msg":"stopped"');
      await expect(fetch(`http://127.0.0.1:${port}/ready`)).rejects.toThrow();
    });
  }
});
