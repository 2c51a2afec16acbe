import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics.js';
import { REJECTIONS_LOGGED_PER_WINDOW, RejectionLog } from '../../src/rejection-log.js';

function keptLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

describe('RejectionLog', () => {
  it('past the first lines of a minute, one summary line says how many were not logged', () => {
    const { log, lines } = keptLogger();
    let now = 1_000_000;
    const metrics = new Metrics();
    const rejections = new RejectionLog(log, metrics, () => now);
    for (let i = 0; i < 1000; i++) rejections.rejected('/webhooks/payments', 'invalid_signature', { source: 'payments' }, 'webhook rejected');
    expect(lines).toHaveLength(REJECTIONS_LOGGED_PER_WINDOW);
    now += 61_000;
    rejections.rejected('/webhooks/payments', 'invalid_signature', { source: 'payments' }, 'webhook rejected');
    expect(lines).toHaveLength(REJECTIONS_LOGGED_PER_WINDOW + 2);
    expect(lines[REJECTIONS_LOGGED_PER_WINDOW]).toMatchObject({
      route: '/webhooks/payments',
      reason: 'invalid_signature',
      suppressed: 1000 - REJECTIONS_LOGGED_PER_WINDOW,
    });
    for (let i = 0; i < 50; i++) rejections.rejected('/webhooks/payments', 'invalid_signature', {}, 'webhook rejected');
    now += 61_000;
    rejections.flush();
    expect(lines.at(-1)).toMatchObject({ suppressed: 51 - REJECTIONS_LOGGED_PER_WINDOW });
  });
});
