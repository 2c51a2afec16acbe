import { randomBytes } from 'node:crypto';
import { systemClock } from '../clock.js';
import type { Config } from '../config/config.js';
import { createCronService } from '../cron/cron-service.js';
import type { Database } from '../db/database.js';
import { AppError, ConfigError } from '../errors.js';
import { EventWriter } from '../db/event-writer.js';
import { buildApp } from '../http/build-app.js';
import { CLIENT_HEADER } from '../http/admin.js';
import { operatorByToken } from '../http/admin-auth.js';
import type { Operator } from '../config/operators.js';
import { silentLogger } from '../log.js';
import { Metrics } from '../metrics.js';
import type { HandlerCatalog } from '../inbox/handler-overview.js';
import { createStripeApi, type StripeApi } from '../payments-api/stripe-client.js';
import { advanceReplays } from '../replay/advance.js';
import { embeddedHolderPid, openCliDatabase } from './local-database.js';

/** Who a command acts as on the database directly when no token names them. */
export const LOCAL_OPERATOR = 'local';

/** An admin API call that did not answer 2xx: its status and the error contract's code and message. */
export class AdminRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminRequestError';
  }
}

/** How the CLI reads and drives hookrun: the admin API, in-process or over HTTP. */
export interface AdminClient {
  /** `local`: this process opened the database; `remote`: a running server's admin API. */
  readonly mode: 'local' | 'remote';
  request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  /** Local mode: run the job's due pending runs here, one after another, until none is left (a backfill with no server). */
  drainDue?(job: string): Promise<number>;
  /** Local mode: advance the due bulk replays one slice each here (alongside any running hookrun; the batch lock keeps it once). */
  advanceReplays?(): Promise<void>;
  close(): Promise<void>;
}

async function decode<T>(response: Response): Promise<T> {
  const text = await response.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (response.ok) return value as T;
  const error = (value as { error?: { code?: string; message?: string } } | undefined)?.error;
  throw new AdminRequestError(response.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${response.status}: ${text.slice(0, 200)}`);
}

function jsonInit(method: string, token: string, body: unknown): RequestInit {
  return {
    method,
    headers: { authorization: `Bearer ${token}`, [CLIENT_HEADER]: 'cli', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/** The admin API of the server that holds DATA_DIR, on this machine. */
export function adminApiUrl(config: Config): string {
  const host = !config.host || config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}/api`;
}

function remoteClient(config: Config, pid: number): AdminClient {
  const base = adminApiUrl(config);
  const holder = `hookrun is running on DATA_DIR ${config.dataDir} (pid ${pid})`;
  const token = config.cliToken;
  if (!token) {
    throw new ConfigError(
      `${holder}, and the embedded database serves one process. Set HOOKRUN_ADMIN_TOKEN (yours, of the server's ADMIN_TOKENS) or ADMIN_TOKEN (the server's) so this command can use its admin API at ${base}, or stop the server.`,
    );
  }
  return {
    mode: 'remote',
    async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, { ...jsonInit(method, token, body), signal: AbortSignal.timeout(60_000) });
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        throw new AdminRequestError(
          0,
          'unreachable',
          `${holder} but its admin API does not answer at ${base} (${cause}). Is PORT the same as the server's? Or stop the server.`,
        );
      }
      try {
        return await decode<T>(response);
      } catch (error) {
        if (error instanceof AdminRequestError && (error.status === 401 || error.code === 'not_configured')) {
          throw new ConfigError(
            `${holder} and refused this command's token (${error.message}) Use yours of the server's ADMIN_TOKENS as HOOKRUN_ADMIN_TOKEN, or its ADMIN_TOKEN, or stop the server.`,
          );
        }
        throw error;
      }
    },
    close: async () => undefined,
  };
}

/** The project's handlers and the built-in ones, loaded once and only when a command asks for them (`hookrun handlers`). */
function projectHandlers(config: Config, stripe: StripeApi | undefined): () => Promise<HandlerCatalog> {
  let loading: Promise<HandlerCatalog> | undefined;
  const load = async () => {
    const { loadHandlers } = await import('../project/load-project.js');
    try {
      return (await loadHandlers(config, { stripe })).registry;
    } catch (error) {
      throw new AppError('not_configured', (error as Error).message); // a broken handler file: its message, not a generic 500
    }
  };
  return () => (loading ??= load());
}

/**
 * Who a command on the database directly acts as: the operator whose token
 * HOOKRUN_ADMIN_TOKEN (or ADMIN_TOKEN) is, with their role, so the audit
 * names them; with no token, `local` (whoever can open the database can act).
 * A token that is none of this environment's operators' is refused.
 */
function localOperator(config: Config): Operator {
  if (config.cliToken === undefined) return { name: LOCAL_OPERATOR, role: 'operator', token: '' };
  const operator = operatorByToken(config.operators, config.cliToken);
  if (!operator) {
    throw new ConfigError(
      'HOOKRUN_ADMIN_TOKEN is neither ADMIN_TOKEN nor a token of ADMIN_TOKENS here: set the same ADMIN_TOKENS as the server, or use yours.',
    );
  }
  return operator;
}

async function localClient(config: Config): Promise<AdminClient> {
  const operator = localOperator(config); // before the database opens: a wrong token costs nothing
  const db: Database = await openCliDatabase(config);
  try {
    const stripe = config.stripe && createStripeApi(config.stripe); // one client for this process's jobs and routes
    const cron = await createCronService({ config, stripe, db, log: silentLogger, metrics: new Metrics(), clock: systemClock });
    cron.validate(); // a bad platform.json is a ConfigError (exit 78), not a failed request
    const token = randomBytes(32).toString('base64url'); // in-process only: never leaves this process
    const { app } = buildApp({
      config: { ...config, operators: [{ ...operator, token }] },
      db,
      clock: systemClock,
      log: silentLogger,
      metrics: new Metrics(),
      writer: new EventWriter(db),
      cron,
      stripe,
      handlers: projectHandlers(config, stripe),
    });
    return {
      mode: 'local',
      request: async <T>(method: 'GET' | 'POST', path: string, body?: unknown) => decode<T>(await app.request(`/api${path}`, jsonInit(method, token, body))),
      async drainDue(job) {
        let started = 0;
        for (let n = await cron.runDue(job); n > 0; n = await cron.runDue(job)) {
          started += n;
          await cron.idle();
        }
        return started;
      },
      async advanceReplays() {
        // The embedded database held here: no worker can be running to take the inbox's work, so waiting for it would wait for nothing.
        const yieldToInbox = config.databaseUrl !== undefined;
        while ((await advanceReplays(db, systemClock, { yieldToInbox })).batchId !== undefined);
      },
      close: async () => {
        await cron.stop();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Reach hookrun's data for a one-shot command. With PostgreSQL, or an
 * embedded DATA_DIR no server holds, the command opens the database itself
 * and calls the admin API in-process; when a running server holds the
 * embedded DATA_DIR (PGlite serves one process), it calls that server's admin
 * API at http://127.0.0.1:$PORT/api with HOOKRUN_ADMIN_TOKEN or ADMIN_TOKEN.
 * Same answers either way, and the same audit under the token's name.
 */
export async function openAdminClient(config: Config): Promise<AdminClient> {
  const pid = embeddedHolderPid(config);
  return pid === undefined ? localClient(config) : remoteClient(config, pid);
}

/** Run `fn` with a client and always close it. */
export async function withAdminClient<T>(config: Config, fn: (client: AdminClient) => Promise<T>): Promise<T> {
  const client = await openAdminClient(config);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
