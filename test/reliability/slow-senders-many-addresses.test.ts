import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS } from '../helpers/config.js';
import { reportFigures } from '../helpers/figures.js';
import { rawClient, webhookHead, type RawClient } from '../helpers/raw-upload.js';
import { checkoutCompleted, sendDelivery, type SendResult } from '../helpers/signed-deliveries.js';
import { pollUntil, seedDataDir, spawnHookrun, type HookrunProcess } from '../helpers/spawn-hookrun.js';

/** The server's defaults: MAX_BODY_BYTES 1 MiB, MAX_INFLIGHT_BODY_BYTES 64 MiB, a quarter of it per address. */
const MAX_BODY = 1024 * 1024;
/** Uploads of MAX_BODY − 1 bytes that stall, kept open from several addresses: together they would hold the whole budget. */
const SLOTS = 64;
/**
 * How long the attack is held while real deliveries are sent: past one body's
 * allowance (5 s + 8 s for 1 MiB), so the cut stalled uploads and their
 * reconnects are part of it. The reserve that keeps room for the real
 * deliveries does not depend on time: at any moment the stalled uploads may
 * hold at most seven eighths of the budget, so a longer hold changes nothing.
 */
const HOLD_MS = 20_000;
/** Real deliveries per round, and a round started every ROUND_MS while the attack holds. */
const ROUND = 6;
const ROUND_MS = 500;
/**
 * A slot whose upload was answered opens the next one after this. A real
 * attacker would reconnect at once; the pause keeps the two shared cores for
 * the server, and the reserve does not depend on it.
 */
const RECONNECT_MS = 500;

function loopbackAddresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`);
}

/** An attack of SLOTS stalled uploads spread over `addresses`, each slot reconnecting once it is answered, until stopped. */
function holdStalledUploads(port: number, addresses: string[]) {
  const body = Buffer.alloc(MAX_BODY - 1, 0x61);
  const current = new Set<RawClient>();
  const answers: string[] = [];
  let running = true;
  const slot = async (address: string) => {
    while (running) {
      const client = rawClient(port, webhookHead(MAX_BODY), body, address);
      current.add(client);
      await client.settled;
      current.delete(client);
      client.socket.destroy();
      if (!running) return;
      answers.push(client.response());
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  };
  const slots = Promise.all(Array.from({ length: SLOTS }, (_, i) => slot(addresses[i % addresses.length]!)));
  return {
    answers,
    /** Every slot's upload is either stalled at its last byte or has been answered at least once. */
    steady: () => current.size + answers.length >= SLOTS && [...current].every((c) => c.sent() >= MAX_BODY - 1 || c.status() !== undefined),
    async stop() {
      running = false;
      for (const c of current) c.socket.destroy();
      await slots;
    },
  };
}

/** Send a round of ROUND real Stripe-signed deliveries every ROUND_MS for HOLD_MS; their outcomes by tag. */
async function sendRealDeliveries(url: string, tag: string): Promise<Map<string, SendResult>> {
  const results = new Map<string, SendResult>();
  const until = Date.now() + HOLD_MS;
  for (let round = 0; Date.now() < until; round++) {
    const pace = new Promise((r) => setTimeout(r, ROUND_MS));
    await Promise.all(
      Array.from({ length: ROUND }, async (_, i) => {
        const key = `${tag}_${round}_${i}`;
        results.set(key, await sendDelivery(url, checkoutCompleted(key), { timeoutMs: 10_000 }));
      }),
    );
    await pace;
  }
  return results;
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** The error body of an answer to an attacker: its status, code and message. */
function refusalOf(response: string): { status: number; code?: string; message?: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
  const json = response.slice(response.indexOf('\r\n\r\n') + 4);
  try {
    const { error } = JSON.parse(json) as { error: { code: string; message: string } };
    return { status, code: error.code, message: error.message };
  } catch {
    return { status };
  }
}

/** Every stored payments event's id, through the admin API. */
async function storedEventIds(url: string): Promise<Set<number>> {
  const ids = new Set<number>();
  let cursor: string | null = '';
  while (cursor !== null) {
    const res = await fetch(`${url}/api/events?source=payments&limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${SECRETS.admin}` },
    });
    const page = (await res.json()) as { events: Array<{ id: number }>; nextCursor: string | null };
    for (const e of page.events) ids.add(e.id);
    cursor = page.nextCursor;
  }
  return ids;
}

describe('stalled uploads from many addresses (spawned, embedded database)', { timeout: 240_000 }, () => {
  let dir: string;
  let server: HookrunProcess;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hookrun-slow-senders-'));
    await seedDataDir(join(dir, 'data'));
    server = await spawnHookrun({ dataDir: join(dir, 'data'), env: { SCHEDULER: 'off' } });
    port = Number(new URL(server.url).port);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  for (const addressCount of [4, 16]) {
    it(`${SLOTS} stalled uploads of 1 MiB − 1 byte from ${addressCount} addresses, held with reconnects: at least 95% of real signed deliveries are accepted`, async () => {
      const attack = holdStalledUploads(port, loopbackAddresses(addressCount));
      try {
        await pollUntil('every attacking upload stalled at its last byte or answered', 60_000, async () => (attack.steady() ? true : undefined));
        const results = await sendRealDeliveries(server.url, `many${addressCount}`);
        const outcomes = [...results.values()];
        const accepted = outcomes.filter((r) => 'status' in r && r.status === 200);
        const acknowledgedIds: number[] = [];
        for (const r of accepted) acknowledgedIds.push((JSON.parse((r as { body: string }).body) as { id: number }).id);
        const refusals = attack.answers.map(refusalOf);
        reportFigures(`stalled uploads from ${addressCount} addresses`, {
          slots: SLOTS,
          holdMs: HOLD_MS,
          realDeliveries: outcomes.length,
          real: countBy(outcomes, (r) => ('status' in r ? String(r.status) : r.error)),
          attackerAnswers: countBy(refusals, (r) => `${r.status} ${r.code ?? 'no code'}`),
        });
        expect(
          accepted.length / outcomes.length,
          `real deliveries: ${JSON.stringify(countBy(outcomes, (r) => ('status' in r ? String(r.status) : r.error)))}`,
        ).toBeGreaterThanOrEqual(0.95);
        // Every answer an attacker got says what and why: 503 past the budget's unreserved part or the address's share, 408 once its allowance ran out.
        for (const refusal of refusals) {
          expect(['503 unavailable', '408 request_timeout']).toContain(`${refusal.status} ${refusal.code}`);
          expect(refusal.message).toMatch(/MAX_INFLIGHT_BODY_BYTES|arrived too slowly/);
        }
        expect(
          refusals.some((r) => r.code === 'request_timeout'),
          'the stalled uploads were cut within the hold',
        ).toBe(true);
        const stored = await storedEventIds(server.url);
        expect(
          acknowledgedIds.filter((id) => !stored.has(id)),
          'acknowledged but not stored',
        ).toEqual([]);
      } finally {
        await attack.stop();
      }
    });
  }
});
