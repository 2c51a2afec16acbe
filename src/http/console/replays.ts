import type { Context, Hono } from 'hono';
import { AppError } from '../../errors.js';
import { cancelReplay, getReplay, listReplays, startReplay } from '../../replay/batches.js';
import { failedAgainEvents, replayOutcomes } from '../../replay/outcomes.js';
import { planReplay } from '../../replay/plan.js';
import { describeSelection } from '../../replay/selection.js';
import type { AdminApiDeps } from '../admin.js';
import { catalogOf } from '../handler-routes.js';
import { checkReplayHandler } from '../replay-routes.js';
import { csrfOf, page } from './http.js';
import type { Flash } from './flash.js';
import { actorOf, noteAudit } from '../audit-trail.js';
import { messagePage } from './layout.js';
import { readConsoleSelection } from './replays-selection.js';
import { newReplayPage, replayPage, replaysPage } from './replays-views.js';

/** Failed-again events a replay's page lists; the rest are counted. */
const FAILED_AGAIN_SHOWN = 50;

const replayId = (c: Context) => (/^\d{1,15}$/.test(c.req.param('id') ?? '') ? Number(c.req.param('id')) : 0);

/** A form's values by name (a field may repeat). */
async function formValues(c: Context): Promise<(name: string) => string[]> {
  const body = (await c.req.parseBody({ all: true }).catch(() => ({}))) as Record<string, unknown>;
  return (name) => {
    const value = body[name];
    return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  };
}

/** An AppError as a console page with its status; anything else is rethrown. */
function refused(c: Context, deps: AdminApiDeps, title: string, error: unknown): Response {
  if (error instanceof AppError) return page(c, messagePage(title, error.message, csrfOf(c, deps)), error.status);
  throw error;
}

/**
 * The Replays pages: `GET /admin/replays/new` (the dry run of a selection
 * from the events list's query, with the handler choice, rate and Start),
 * `POST /admin/replays` (start, then its page), `GET /admin/replays/{id}`
 * (progress, Cancel) and `GET /admin/replays` (the audit).
 */
export function addReplayPages(app: Hono, deps: AdminApiDeps): void {
  const { db, clock } = deps;
  app.get('/replays', async (c) => {
    const batches = await listReplays(db, { limit: 100 });
    return page(c, replaysPage(batches, await replayOutcomes(db, batches), csrfOf(c, deps), clock.now()));
  });

  app.get('/replays/new', async (c) => {
    try {
      const { fields, selection } = readConsoleSelection((name) => c.req.queries(name) ?? []);
      const runHandler = c.req.query('run_handler') || undefined;
      const catalog = await catalogOf(deps.handlers);
      checkReplayHandler(catalog, runHandler);
      const plan = await planReplay(db, selection, runHandler, { catalog });
      const handlerNames = [...new Set([...catalog.names(), ...plan.handlers.map((h) => h.name)])].sort();
      const description = describeSelection(selection);
      return page(c, newReplayPage({ description, fields, plan, handlerNames, runHandler, csrf: csrfOf(c, deps) }));
    } catch (error) {
      return refused(c, deps, 'Cannot plan this replay', error);
    }
  });

  app.post('/replays', async (c) => {
    try {
      const form = await formValues(c);
      const { selection } = readConsoleSelection(form);
      const runHandler = form('run_handler')[0] || undefined;
      const rateText = form('rate')[0] ?? '';
      if (!/^\d{1,4}$/.test(rateText)) throw new AppError('bad_request', 'The rate is a whole number of events per second, from 1 to 1000.');
      const catalog = await catalogOf(deps.handlers);
      checkReplayHandler(catalog, runHandler);
      const actor = actorOf(c);
      const batch = await startReplay(db, clock, { selection, handler: runHandler, rate: Number(rateText), actor });
      deps.log.info({ replay: batch.id, total: batch.total, rate: batch.rate, handler: runHandler, actor }, 'bulk replay started from the console');
      noteAudit(c, `${batch.total} events: ${batch.description}${runHandler ? `, handler ${runHandler} only` : ''}`, `replay ${batch.id}`);
      return c.redirect(`/admin/replays/${batch.id}?started=1`, 303);
    } catch (error) {
      return refused(c, deps, 'Not started', error);
    }
  });

  app.get('/replays/:id', async (c) => {
    const batch = await getReplay(db, replayId(c));
    if (!batch) return page(c, messagePage('Not found', `No bulk replay ${replayId(c) || ''}. See the list at /admin/replays.`, csrfOf(c, deps)), 404);
    const notice: Flash | undefined =
      c.req.query('started') === '1'
        ? { text: 'Started: the running instances put the events back at the rate you chose.', tone: 'success' }
        : c.req.query('cancelled') === '1'
          ? { text: 'Cancelled: no further event is put back.', tone: 'warning' }
          : undefined;
    const [outcomes, failed] = await Promise.all([replayOutcomes(db, [batch]), failedAgainEvents(db, batch, FAILED_AGAIN_SHOWN)]);
    return page(c, replayPage(batch, { outcome: outcomes.get(batch.id), failed }, csrfOf(c, deps), clock.now(), notice));
  });

  app.post('/replays/:id/cancel', async (c) => {
    try {
      const batch = await cancelReplay(db, clock, replayId(c));
      deps.log.info({ replay: batch.id, replayed: batch.replayed, total: batch.total }, 'bulk replay cancelled from the console');
      return c.redirect(`/admin/replays/${batch.id}?cancelled=1`, 303);
    } catch (error) {
      return refused(c, deps, 'Not cancelled', error);
    }
  });
}
