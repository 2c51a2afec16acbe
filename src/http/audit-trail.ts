import type { Context, MiddlewareHandler } from 'hono';
import { baseRoutePath, matchedRoutes } from 'hono/route';
import type { OperatorRole } from '../config/operators.js';
import { recordAudit, type AuditEntryInput, type AuditVia } from '../db/audit.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log.js';
import type { AuditedAction } from './audited-actions.js';

/** Who is signed in on this request, and how they came: what the audit records and what the role check reads. */
export interface SignedIn {
  name: string;
  role: OperatorRole;
  via: AuditVia;
}

declare module 'hono' {
  interface ContextVariableMap {
    signedIn: SignedIn;
    /** What an action did or acted on, when the route knows more than its path says ("replay 7", "12 events"). */
    auditTarget: string;
    auditDetail: string;
  }
}

/** Who acted, as a replayed delivery's history and a bulk replay show it: "alice via console", with what a CLI said of itself ("bob via cli (cli:ana@laptop)"). */
export function actorOf(c: Context, said?: string): string {
  const signedIn = c.get('signedIn');
  return `${signedIn.name} via ${signedIn.via}${said ? ` (${said})` : ''}`;
}

/** Tell the audit what an action did (and on what, when the path does not say), e.g. `noteAudit(c, '12 events', 'replay 7')`. */
export function noteAudit(c: Context, detail: string, target?: string): void {
  c.set('auditDetail', detail);
  if (target !== undefined) c.set('auditTarget', target);
}

/** What the guard needs: where to record, the actions by route, and how this surface refuses and explains a failure. */
export interface ActionGuardOptions {
  db: Database;
  now: () => number;
  log: Logger;
  /** `METHOD /path` (relative to the mount) → the action. */
  actions: Readonly<Record<string, AuditedAction>>;
  /** Posts that change nothing an operator owns (the console's logout): open to a viewer, not recorded. */
  openToViewers?: readonly string[];
  /** The answer to a viewer: 403 with what role is needed. */
  refuse: (c: Context, message: string) => Response | Promise<Response>;
  /** Why an answer of 400 or more failed, read from it. */
  failureOf: (response: Response) => Promise<string>;
}

/** The route's parameters, read by its pattern (`/cron/jobs/:job/run`) from the path. */
function paramsOf(pattern: string, path: string): Record<string, string> {
  const names = pattern.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    if (!name.startsWith(':') || values[i] === undefined) return;
    try {
      params[name.slice(1)] = decodeURIComponent(values[i]);
    } catch {
      params[name.slice(1)] = values[i];
    }
  });
  return params;
}

/**
 * The one gate of operators' actions, for the admin API and the console:
 * every request that is not a read (GET, HEAD) needs the operator role (a
 * viewer gets the surface's 403, saying so), and each one, done, refused or
 * failed, is recorded in the audit after it ran, under the signed-in name.
 * Behind the sign-in, which sets `signedIn`.
 */
export function guardActions(options: ActionGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const mount = baseRoutePath(c).replace(/\/$/, ''); // where this surface is mounted: "/api", "/admin", or "" at the root
    const route = [...matchedRoutes(c)].reverse().find((r) => r.method === c.req.method);
    if (!route) return next(); // no such route: the 404 says so, and nothing was done
    const pattern = route.path.slice(mount.length) || '/';
    const key = `${c.req.method} ${pattern}`;
    if (options.openToViewers?.includes(key)) return next();
    const named = options.actions[key];
    const signedIn = c.get('signedIn');
    const entry = {
      operator: signedIn.name,
      role: signedIn.role,
      via: signedIn.via,
      action: named?.action ?? key,
      target: named?.target?.(paramsOf(pattern, c.req.path.slice(mount.length))) ?? null,
    };
    const record = async (outcome: AuditEntryInput['outcome'], detail: string | null, target = entry.target) => {
      try {
        await recordAudit(options.db, { ...entry, target, outcome, detail }, new Date(options.now()));
      } catch (error) {
        options.log.error({ err: error, action: entry.action, operator: entry.operator }, 'the audit could not record an action');
      }
    };
    if (signedIn.role !== 'operator') {
      const message = `${signedIn.name} signs in as a viewer, who reads but may not act: ${entry.action} needs the operator role (ADMIN_TOKENS name:operator:token).`;
      await record('refused', message);
      return options.refuse(c, message);
    }
    try {
      await next();
    } catch (error) {
      // Not turned into an answer on this surface: recorded without its message (it may say more than an operator should read), then passed on.
      await record('failed', 'internal_error: the action failed on the server; its log has why');
      throw error;
    }
    const failed = c.res.status >= 400;
    const detail = failed ? await options.failureOf(c.res.clone()) : (c.get('auditDetail') ?? null);
    await record(failed ? 'failed' : 'ok', detail, c.get('auditTarget') ?? entry.target);
  };
}
