import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServerSentEvents } from '../../src/cli/listen.js';
import { startAlertReceiver } from '../helpers/alert-receiver.js';
import { SECRETS } from '../helpers/config.js';
import { createEmptyPostgresDatabase } from '../helpers/db.js';
import { withDatabase } from '../helpers/inspect-db.js';
import { PGBOUNCER, startPgBouncer, type Pooler } from '../helpers/pgbouncer.js';
import { assertNoSecretLeaks } from '../helpers/secret-scan.js';
import { acknowledged, checkoutCompleted, sendDelivery, stripeDelivery } from '../helpers/signed-deliveries.js';
import { pollUntil, runHookrun, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

const POOLED = { DATABASE_POOLER: 'transaction' };

// Behind a transaction pooler (PgBouncer pool_mode=transaction, as Supabase's port 6543 and Neon's pooled hosts):
// what the many-instances test does not cover there (start-up, check, migrations, the stream, the CLI).
describe.skipIf(!process.env.TEST_DATABASE_URL || !PGBOUNCER)('behind PgBouncer in transaction mode', () => {
  let database: { url: string; drop(): Promise<void> };
  let pooler: Pooler;
  let pooledUrl: string;
  const started: HookrunProcess[] = [];

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    pooler = await startPgBouncer('transaction');
    pooledUrl = pooler.through(database.url);
  }, 60_000);

  afterAll(async () => {
    for (const proc of started) await proc.stop(10_000);
    await pooler?.stop();
    await database?.drop();
    assertNoSecretLeaks();
  });

  it('without DATABASE_POOLER, start-up stops (exit 78) and says to set it: PgBouncer refuses the settings hookrun sends at connect', async () => {
    const result = await runHookrun({ databaseUrl: pooledUrl, args: ['start'] });
    expect(result.code, result.output).toBe(78);
    expect(result.output).toContain('unsupported startup parameter');
    expect(result.output).toContain('set DATABASE_POOLER=transaction');
  });

  it('hookrun check says how instances are woken: a 1 s poll through the pooler alone, NOTIFY with DATABASE_DIRECT_URL', async () => {
    const alone = await runHookrun({ databaseUrl: pooledUrl, env: POOLED, args: ['check'] });
    expect(alone.code, alone.output).toBe(0);
    expect(alone.output).toContain('pooler       transaction: a 1 s poll (no NOTIFY through a transaction pooler)');
    expect(alone.output).toContain('DATABASE_POOLER=transaction without DATABASE_DIRECT_URL');
    const direct = await runHookrun({ databaseUrl: pooledUrl, env: { ...POOLED, DATABASE_DIRECT_URL: database.url }, args: ['check', '--json'] });
    expect(direct.code, direct.output).toBe(0);
    expect(JSON.parse(direct.output.slice(direct.output.indexOf('{'))).pooler).toMatchObject({
      mode: 'transaction',
      wakeUps: expect.stringMatching(/^NOTIFY over DATABASE_DIRECT_URL/),
    });
  });

  it('a DATABASE_DIRECT_URL nothing answers stops start-up (exit 78) naming it, without its password', async () => {
    const direct = new URL(database.url);
    direct.port = '1';
    direct.password = 'direct-url-password';
    const result = await runHookrun({ databaseUrl: pooledUrl, env: { ...POOLED, DATABASE_DIRECT_URL: direct.toString() }, args: ['start'] });
    expect(result.code, result.output).toBe(78);
    expect(result.output).toContain('Cannot reach PostgreSQL at DATABASE_DIRECT_URL (127.0.0.1:1/');
    expect(result.output).not.toContain('direct-url-password');
  });

  it('DATABASE_POOLER without DATABASE_URL is refused (exit 78): the embedded database has no pooler', async () => {
    const result = await runHookrun({ env: { ...POOLED, DATABASE_URL: '' }, args: ['check'] });
    expect(result.code).toBe(78);
    expect(result.output).toContain('DATABASE_POOLER and DATABASE_DIRECT_URL describe DATABASE_URL, which is unset');
  });

  it('a server through the pooler migrates an empty database over the direct URL, stores, processes and streams events; the CLI pauses a job and prunes through the pooler', async () => {
    const server = await spawnHookrun({ databaseUrl: pooledUrl, env: { ...POOLED, DATABASE_DIRECT_URL: database.url, SCHEDULER: 'off' } });
    started.push(server);
    // The stream is woken by NOTIFY over the direct URL; its read is bounded by the fetch's signal.
    const stream = await fetch(`${server.url}/api/events/stream?source=payments`, {
      headers: { authorization: `Bearer ${SECRETS.admin}` },
      signal: AbortSignal.timeout(20_000),
    });
    expect(stream.status).toBe(200);
    const firstEvent = (async () => {
      for await (const message of readServerSentEvents(stream.body!))
        if (message.event === 'event') return JSON.parse(message.data) as { id: number; key: string };
      return undefined;
    })();
    const tag = `pooled_${Date.now().toString(36)}`;
    expect(acknowledged(await sendDelivery(server.url, checkoutCompleted(tag)))).toBe(true);
    const streamed = await firstEvent;
    await stream.body?.cancel().catch(() => undefined);
    expect(streamed?.key).toBe(`evt_${tag}`);
    await pollUntil('the event processed', 15_000, () =>
      withDatabase({ url: database.url }, async (query) => {
        const [row] = await query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE key = $1', [`evt_${tag}`]);
        return row?.status === 'processed' ? true : undefined;
      }),
    );

    const pause = await runHookrun({ databaseUrl: pooledUrl, env: POOLED, args: ['cron', 'pause', 'keep-alive'] });
    expect(pause.code, pause.output).toBe(0);
    const paused = await withDatabase({ url: database.url }, (query) => query<{ job: string }>('SELECT job FROM hookrun.cron_pauses'));
    expect(paused.map((p) => p.job)).toEqual(['keep-alive']);
    const prune = await runHookrun({ databaseUrl: pooledUrl, env: POOLED, args: ['prune', '--json'] });
    expect(prune.code, prune.output).toBe(0);
  });

  it('alerts through the pooler: an event that goes dead opens an issue, told to ALERT_WEBHOOK_URL', async () => {
    for (const earlier of started.splice(0)) await earlier.stop(10_000); // the one instance on this database: it must be the one that alerts
    const receiver = await startAlertReceiver();
    try {
      const server = await spawnHookrun({
        databaseUrl: pooledUrl,
        env: { ...POOLED, DATABASE_DIRECT_URL: database.url, SCHEDULER: 'off', ALERT_WEBHOOK_URL: receiver.url },
      });
      started.push(server);
      // A subscription event with no subscription in it: the payments mirror cannot read it, ever, so it goes dead at once.
      const unreadable = stripeDelivery({
        id: `evt_unreadable_${Date.now().toString(36)}`,
        object: 'event',
        type: 'customer.subscription.updated',
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        data: { object: { object: 'subscription' } },
      });
      expect(acknowledged(await sendDelivery(server.url, unreadable))).toBe(true);
      const [text] = await receiver.waitForDelivered(1, 20_000);
      expect(text).toContain('1 issue opened'); // the issue, told once, not the event
      expect(text).toMatch(/issue #\d+ Handler \S+ fails: .* \(handler_failing, 1 time so far\): \/admin\/issues\/\d+/);
    } finally {
      await receiver.close();
    }
  });

  it('a transaction pooler that accepts the settings and is not declared: hookrun says NOTIFY is not heard, and finds new events by polling', async () => {
    const lenient = await startPgBouncer('transaction', process.env.TEST_DATABASE_URL!, { ignoreStartupParameters: ['statement_timeout', 'lock_timeout'] });
    try {
      const server = await spawnHookrun({ databaseUrl: lenient.through(database.url), env: { SCHEDULER: 'off' } });
      started.push(server);
      await pollUntil('the warning that NOTIFY is not heard', 15_000, () => (server.output().includes('LISTEN does not hear NOTIFY') ? true : undefined));
      expect(server.output()).toContain('Set DATABASE_POOLER=transaction and DATABASE_DIRECT_URL');
      const tag = `lenient_${Date.now().toString(36)}`;
      expect(acknowledged(await sendDelivery(server.url, checkoutCompleted(tag)))).toBe(true);
      await pollUntil('the event processed', 15_000, () =>
        withDatabase({ url: database.url }, async (query) => {
          const [row] = await query<{ status: string }>('SELECT status FROM hookrun.webhook_events WHERE key = $1', [`evt_${tag}`]);
          return row?.status === 'processed' ? true : undefined;
        }),
      );
      await server.stop(10_000);
    } finally {
      await lenient.stop();
    }
  });
});
