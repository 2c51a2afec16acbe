import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { inReadTurn, letIngestGoFirst } from '../../src/db/ingest-first.js';

/** Only what `inReadTurn` reads of a database: its tuning. */
const databaseWith = (yieldToIngestMs: number | undefined) =>
  ({ tuning: { lanes: 1, longestStatementMs: 0, inTransactionBudgetMs: 0, yieldToIngestMs } }) as unknown as Database;

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('long reads on a one-session database take turns after the receivers', () => {
  it("three searches' slices run one at a time, never two at once", async () => {
    const db = databaseWith(60_000);
    let running = 0;
    let most = 0;
    const slice = async () => {
      most = Math.max(most, ++running);
      await tick();
      running--;
    };
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        for (let i = 0; i < 4; i++) await inReadTurn(db, { queued: 0 }, slice);
      }),
    );
    expect(most).toBe(1);
  });

  it('a slice waits while inserts are queued, and starts once they are written', async () => {
    const db = databaseWith(60_000); // a bound no test run reaches: the order below is the queue's, not a race
    const ingest = { queued: 1 };
    const order: string[] = [];
    const read = inReadTurn(db, ingest, async () => void order.push('slice'));
    await tick();
    await tick();
    order.push('insert committed');
    ingest.queued = 0;
    await read;
    expect(order).toEqual(['insert committed', 'slice']);
  });

  it('a failed slice does not stop the next one', async () => {
    const db = databaseWith(60_000);
    const failed = inReadTurn(db, { queued: 0 }, () => Promise.reject(new Error('statement timeout')));
    await expect(failed).rejects.toThrow('statement timeout');
    await expect(inReadTurn(db, { queued: 0 }, async () => 'next')).resolves.toBe('next');
  });

  it('waits no longer than its bound when the receivers never empty their queue', async () => {
    const ingest = { queued: 1 };
    await letIngestGoFirst(ingest, 20);
    await expect(inReadTurn(databaseWith(20), ingest, async () => 'read')).resolves.toBe('read');
  });

  it('on PostgreSQL (no bound) a read neither waits nor queues', async () => {
    const db = databaseWith(undefined);
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 3 }, () =>
        inReadTurn(db, { queued: 5 }, async () => {
          most = Math.max(most, ++running);
          await tick();
          running--;
        }),
      ),
    );
    expect(most).toBe(3);
  });
});
