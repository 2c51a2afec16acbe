import { Command } from 'commander';
import type { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AdminClient } from '../../src/cli/admin-client.js';
import { registerEventsCommands } from '../../src/cli/events.js';
import { registerHandlersCommands } from '../../src/cli/handlers.js';
import { SECRETS } from '../helpers/config.js';
import { pgliteOnly, useTestDatabase } from '../helpers/db.js';
import { drain, eventRow, storeEvent } from '../inbox/fixtures.js';
import { handlersWith, operatorApp, recorder } from './operator-app.js';

/** The app the CLI's admin client calls: what `withAdminClient` hands the commands, in-process as its local mode does. */
const target = vi.hoisted(() => ({ app: undefined as Hono | undefined }));

vi.mock('../../src/config/config.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/config/config.js')>();
  // The commands' `loadConfig()` (the mocked client ignores it); the test helpers' `loadConfig(env)` stays real.
  return { ...real, loadConfig: (...args: Parameters<typeof real.loadConfig>) => (args.length === 0 ? ({} as never) : real.loadConfig(...args)) };
});
vi.mock('../../src/cli/admin-client.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/cli/admin-client.js')>();
  const client: AdminClient = {
    mode: 'local',
    async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const res = await target.app!.request(`/api${path}`, {
        method,
        headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const value = (await res.json()) as T & { error?: { code: string; message: string } };
      if (!res.ok) throw new real.AdminRequestError(res.status, value.error!.code, value.error!.message);
      return value;
    },
    close: async () => undefined,
  };
  return { ...real, withAdminClient: <T>(_config: unknown, fn: (c: AdminClient) => Promise<T>) => fn(client) };
});

/** Run `hookrun <args>` in this process: its stdout, stderr and exit code. */
async function hookrun(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = new Command().exitOverride();
  registerHandlersCommands(program);
  registerEventsCommands(program);
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  try {
    await program.parseAsync(['node', 'hookrun', ...args]);
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const key = (event: { key: string }) => event.key;

describe.each(pgliteOnly())('hookrun handlers on $name', (kind) => {
  const testDb = useTestDatabase(kind);
  afterEach(() => {
    target.app = undefined;
  });

  it('pause → the handler’s events wait → list shows them waiting for the pause → resume → processed', async () => {
    const calls = recorder();
    const ops = await operatorApp(
      testDb.db,
      handlersWith({ 'send-welcome': { concurrency: { limit: 5, key }, rateLimit: { limit: 100, period: '1s' } } }, calls),
    );
    target.app = ops.app;
    const paused = await hookrun('handlers', 'pause', 'send-welcome');
    expect(paused).toEqual({
      code: 0,
      stdout: 'send-welcome paused: its deliveries wait on every instance until `hookrun handlers resume send-welcome`.\n',
      stderr: '',
    });
    expect((await hookrun('handlers', 'pause', 'send-welcome')).stdout).toMatch(/^send-welcome was already paused/);
    const id = await storeEvent(testDb.db, 'test', 'send-welcome', { key: 'cus_1' });
    await drain(ops.worker);
    expect((await eventRow(testDb.db, id)).status).toBe('pending');

    const table = await hookrun('handlers', 'list');
    expect(table.code).toBe(0);
    const [header, row] = table.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['HANDLER', 'FLOW', 'PAUSED', 'RUNNING', 'WAITING', 'FAILED', 'PARKED', 'DEAD']);
    expect(row!.split(/\s{2,}/)).toEqual([
      'send-welcome',
      'concurrency 5 per key · rate 100/1s',
      expect.stringMatching(/^since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
      '0',
      '1: paused 1',
      '0',
      '0',
      '0',
    ]);
    const [json] = JSON.parse((await hookrun('handlers', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json).toMatchObject({
      name: 'send-welcome',
      paused: true,
      waiting: { ready: 0, concurrency: 0, rate: 0, debounce: 0, batch: 0, paused: 1 },
      failed: 0,
      topWaitingKeys: [{ key: 'cus_1', waiting: 1 }],
    });

    expect((await hookrun('handlers', 'resume', 'send-welcome')).stdout).toBe('send-welcome resumed: its waiting deliveries start now, within its limits.\n');
    await drain(ops.worker);
    expect((await eventRow(testDb.db, id)).status).toBe('processed');
    expect(JSON.parse((await hookrun('handlers', 'resume', 'send-welcome', '--json')).stdout)).toEqual({
      handler: 'send-welcome',
      paused: false,
      changed: false,
    });
    expect((await hookrun('handlers', 'resume', 'send-welcome')).stdout).toBe('send-welcome was not paused.\n');
  });

  it('an unknown name is refused (exit 1) naming the nearest handler and every one', async () => {
    target.app = (await operatorApp(testDb.db, handlersWith({ 'send-welcome': {}, billing: {} }, recorder()))).app;
    const refused = await hookrun('handlers', 'pause', 'send-welcom');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'hookrun: No handler "send-welcom". Did you mean "send-welcome"? Handlers: billing, send-welcome. A handler is a file handlers/<name>.ts in your project, or a built-in one.\n',
    );
    expect((await hookrun('handlers', 'resume', 'nope')).code).toBe(1);
  });

  it("events list --parked lists the event an order: 'key' handler parked (MAX_ATTEMPTS=1), and handlers list counts it", async () => {
    const calls = recorder();
    const ops = await operatorApp(testDb.db, handlersWith({ ordered: { order: 'key', key } }, calls), { MAX_ATTEMPTS: '1' });
    target.app = ops.app;
    const poison = await storeEvent(testDb.db, 'test', 'ordered', { key: 'a' });
    const fine = await storeEvent(testDb.db, 'test', 'ordered', { key: 'a' });
    calls.fail = (_handler, eventId) => eventId === poison;
    await drain(ops.worker);

    const parked = JSON.parse((await hookrun('events', 'list', '--parked', '--json')).stdout) as { events: Array<{ id: number }> };
    expect(parked.events.map((e) => e.id)).toEqual([poison]);
    const all = JSON.parse((await hookrun('events', 'list', '--json')).stdout) as { events: Array<{ id: number }> };
    expect(all.events.map((e) => e.id)).toEqual([fine, poison]);
    const table = await hookrun('events', 'list', '--parked');
    expect(table.stdout).toMatch(new RegExp(`^ID .*\\n\\s*${poison} .* dead .*boom ${poison}`));
    expect((await hookrun('events', 'list', '--parked', '--status', 'processed')).stdout).toBe('No events with a parked handler delivery, status processed.\n');

    const list = await hookrun('handlers', 'list');
    expect(list.stdout).toMatch(/^ordered\s+order by key\s+-\s+0\s+0\s+0\s+1\s+0$/m);
    expect(list.stdout).toContain('Parked events: hookrun events list --parked (fix the cause, then replay them).');
  });
});
