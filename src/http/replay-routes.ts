import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { HandlerCatalog } from '../inbox/handler-overview.js';
import type { Logger } from '../log.js';
import { cancelReplay, getReplay, listReplays, startReplay } from '../replay/batches.js';
import { planReplay, type ReplayPlan } from '../replay/plan.js';
import { describeSelection, selectionToJson, type ReplaySelection } from '../replay/selection.js';
import { firstIssue } from './admin-schemas.js';
import { actorOf, noteAudit } from './audit-trail.js';
import { checkSource, knownSources } from './known-sources.js';
import { catalogOf, type HandlerCatalogSource } from './handler-routes.js';
import { bulkReplayBody, replayListQuery, selectionOf } from './replay-schemas.js';

/** What the bulk replay routes use. */
export interface ReplayRouteDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  handlers?: HandlerCatalogSource;
  readBody(c: Context): Promise<unknown>;
  /** The sources a selection may name (known-sources.ts); absent: the shipped ones. */
  sources?: readonly string[];
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new AppError('bad_request', firstIssue(result.error));
}

function replayId(c: Context): number {
  const raw = c.req.param('id') ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw new AppError('bad_request', `A bulk replay id is a positive whole number, not "${raw.slice(0, 40)}".`);
  return Number(raw);
}

/** A handler to run alone must be one this hookrun runs (when it knows its handlers): a 400 naming those it does. */
export function checkReplayHandler(catalog: HandlerCatalog, handler: string | undefined): void {
  if (handler === undefined) return;
  const names = catalog.names();
  if (names.length === 0 || names.includes(handler)) return;
  const shown = names.slice(0, 12).join(', ');
  throw new AppError('bad_request', `handler: no handler named "${handler}" runs here; the handlers are ${shown}${names.length > 12 ? ', …' : ''}.`);
}

/** The plan and the selection as the API answers a dry run. */
export const planJson = (selection: ReplaySelection, plan: ReplayPlan, handler: string | undefined) => ({
  selection: selectionToJson(selection),
  description: describeSelection(selection),
  handler: handler ?? null,
  plan,
});

/**
 * `POST /api/replays` (a dry run, or start a bulk replay: 202 with the
 * batch), `GET /api/replays` (their progress, newest first; who started each is in the audit too), `GET /api/replays/{id}`
 * (its progress) and `POST /api/replays/{id}/cancel`. The runners started with
 * the service advance a started replay at its rate.
 */
export function addReplayRoutes(app: Hono, deps: ReplayRouteDeps): void {
  const { db, clock, log } = deps;
  app.post('/replays', async (c) => {
    const body = parse(bulkReplayBody, await deps.readBody(c));
    checkSource(body.source, deps.sources ?? knownSources({}));
    const { ids, handled_by: handledBy, handler, rate, dry_run: dryRun } = body;
    const selection = selectionOf({ ...body, handler: handledBy }, ids);
    const catalog = await catalogOf(deps.handlers);
    checkReplayHandler(catalog, handler);
    const plan = await planReplay(db, selection, handler, { catalog });
    if (dryRun) {
      noteAudit(c, `dry run: ${describeSelection(selection)}`);
      return c.json({ dryRun: true, ...planJson(selection, plan, handler) });
    }
    const actor = actorOf(c, body.actor);
    const replay = await startReplay(db, clock, { selection, handler, rate, actor, plan });
    noteAudit(c, `${replay.total} events: ${describeSelection(selection)}${handler ? `, handler ${handler} only` : ''}`, `replay ${replay.id}`);
    log.info({ replay: replay.id, total: replay.total, rate, handler, actor }, 'bulk replay started by the admin API');
    return c.json({ replay, plan }, 202);
  });

  app.get('/replays', async (c) => {
    const q = parse(replayListQuery, c.req.query());
    const replays = await listReplays(db, { limit: q.limit + 1, before: q.cursor === undefined ? undefined : Number(q.cursor) });
    const page = replays.slice(0, q.limit);
    return c.json({ replays: page, nextCursor: replays.length > q.limit ? String(page[page.length - 1]!.id) : null });
  });

  app.get('/replays/:id', async (c) => {
    const id = replayId(c);
    const replay = await getReplay(db, id);
    if (!replay) throw new AppError('not_found', `No bulk replay with id ${id}. List them with GET /api/replays.`);
    return c.json({ replay });
  });

  app.post('/replays/:id/cancel', async (c) => {
    const replay = await cancelReplay(db, clock, replayId(c));
    log.info({ replay: replay.id, replayed: replay.replayed, total: replay.total }, 'bulk replay cancelled by the admin API');
    return c.json({ replay });
  });
}
