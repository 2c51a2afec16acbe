import { describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/cron/cron-service.js';
import type { HandlerOverview } from '../../src/inbox/handler-overview.js';
import { overviewVerdict } from '../../src/http/console/overview-verdict.js';

const handler = (name: string, extra: Partial<HandlerOverview> = {}) => ({ name, paused: false, parked: 0, failed: 0, dead: 0, ...extra }) as HandlerOverview;
const job = (name: string, extra: Partial<JobStatus> = {}) => ({ name, pausedAt: null, lastRun: null, ...extra }) as unknown as JobStatus;

describe('overviewVerdict', () => {
  it('is healthy when nothing fails and nothing waits for a person', () => {
    const verdict = overviewVerdict({ counts: { processed: 10, ignored: 2 }, handlers: [handler('crm')], jobs: [job('tick')], issues: { resolved: 3 } });
    expect(verdict).toEqual({ level: 'healthy', reasons: [] });
  });

  it('is degraded by dead events, parked deliveries and pauses, each linked to where it is dealt with', () => {
    const verdict = overviewVerdict({
      counts: { processed: 10, dead: 2 },
      handlers: [handler('crm', { parked: 1 }), handler('mail', { paused: true })],
      jobs: [job('tick', { pausedAt: new Date() })],
      issues: { acknowledged: 1 },
    });
    expect(verdict.level).toBe('degraded');
    expect(verdict.reasons).toEqual([
      { text: '2 dead events to look at or replay', href: '/admin/events?status=dead' },
      { text: 'handler crm has 1 parked delivery', href: '/admin/events?handler=crm&parked=1' },
      { text: 'handler mail is paused', href: '/admin/handlers/mail' },
      { text: 'job tick is paused', href: '/admin/jobs/tick' },
      { text: '1 acknowledged issue', href: '/admin/issues?status=acknowledged' },
    ]);
  });

  it('is failing with an open issue, retrying events or a failed job, those first', () => {
    const verdict = overviewVerdict({
      counts: { failed: 3, dead: 1 },
      handlers: [],
      jobs: [job('nightly', { lastRun: { status: 'failed' } as JobStatus['lastRun'] })],
      issues: { open: 2 },
    });
    expect(verdict.level).toBe('failing');
    expect(verdict.reasons.map((r) => r.href)).toEqual([
      '/admin/issues?status=open',
      '/admin/events?status=failed',
      '/admin/jobs/nightly',
      '/admin/events?status=dead',
    ]);
  });
});
