import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { EventWriter } from '../db/event-writer.js';
import { ConfigError } from '../errors.js';
import { parseSince } from '../time/since.js';
import type { GithubApiSettings, GithubHook, KeyedApiSettings } from '../config/senders.js';
import type { ReconcileProgress, ReconcileSummary } from './summary.js';

// Each sender's client and reconcile (./github.js, ./paddle.js, ./workos.js, ./clerk.js) load when it runs: the shipped
// reconcile jobs are listed at every start-up, a serverless cold start's included, and run rarely.

/** GitHub redelivers a delivery only within 3 days of it: the API refuses an older one. */
const GITHUB_REDELIVERY_DAYS = 3;
/** Paddle's events API lists the last 90 days. */
const PADDLE_EVENT_DAYS = 90;
/** WorkOS's events API serves the last 30 days. */
const WORKOS_EVENT_DAYS = 30;

/** `GITHUB_TOKEN` and `GITHUB_HOOK` present, or the name of the first missing one. */
function githubReady(settings: GithubApiSettings): { token: string; hook: GithubHook; apiBase: URL } | { missing: string } {
  if (!settings.token) return { missing: 'GITHUB_TOKEN' };
  if (!settings.hook) return { missing: 'GITHUB_HOOK' };
  return { token: settings.token, hook: settings.hook, apiBase: settings.apiBase };
}

/** A sender API reached with one key (PADDLE_API_KEY, WORKOS_API_KEY, CLERK_SECRET_KEY): the key and base, or undefined when the key is unset. */
function keyedApi(settings: KeyedApiSettings): { key: string; apiBase: URL } | undefined {
  return settings.key ? { key: settings.key, apiBase: settings.apiBase } : undefined;
}
/** The senders `hookrun reconcile <sender>` repairs gaps of beyond Stripe (`payments`, payments-api/reconcile.ts). */
export const RECONCILE_SENDERS = ['github', 'paddle', 'workos', 'clerk'] as const;
/** One of RECONCILE_SENDERS: a CLI argument, an admin route segment and a job name's suffix (`reconcile-github`). */
export type ReconcileSender = (typeof RECONCILE_SENDERS)[number];

/** What one reconcile run gets: the settings, the inbox and the window. */
export interface SenderReconcileInput {
  config: Pick<Config, 'senderApis' | 'providers'>;
  db: Database;
  writer: Pick<EventWriter, 'write'>;
  since: Date;
  onProgress?: ReconcileProgress;
  signal?: AbortSignal;
}

/** One sender's gap repair as the CLI, the admin API and its job use it. */
export interface SenderReconcile {
  title: string;
  /** How far back the sender's API serves (days); undefined: no limit. `--since` older is refused. */
  maxDays: number | undefined;
  /** Why `maxDays`: ends the refusal's message. */
  maxDaysReason: string;
  /** A scheduled run looks back at least this far (the sender's own retries), overlapping the previous run. */
  jobWindowDays: number;
  /** What its scheduled job does, for `hookrun cron list` and the dashboard. */
  jobDescription: string;
  /** What "found" counts, and what "added" means, for the printed summary. */
  found: string;
  added: string;
  /** The settings it needs are present, or a ConfigError naming the variable to set (exit 78). */
  check(config: SenderReconcileInput['config']): void;
  run(input: SenderReconcileInput): Promise<ReconcileSummary>;
}

const missing = (name: string, what: string) => new ConfigError(`${name} is not set: ${what}`);

const GITHUB_NEEDS: Record<string, string> = {
  GITHUB_TOKEN:
    "hookrun needs a GitHub token that may read and redeliver the webhook's deliveries (a fine-grained token with Webhooks read and write on the repository, or admin:org_hook for an organization webhook).",
  GITHUB_HOOK: 'name the webhook whose deliveries to repair, as owner/repo/<hook id> or org/<organization>/<hook id> (the id is in its settings URL).',
};

/** The route's provider switch names this sender, or a ConfigError: its events would reach another provider's handlers. */
function requireProvider(config: SenderReconcileInput['config'], route: 'payments' | 'auth', provider: string, title: string): void {
  const chosen = config.providers[route];
  if (chosen !== provider) {
    const name = `${route.toUpperCase()}_PROVIDER`;
    throw new ConfigError(
      `${name} is ${chosen}, so /webhooks/${route} is not ${title}'s: set ${name}=${provider} to store ${title}'s events there (its mirror processes them).`,
    );
  }
}

const STORED = 'new (stored now, the worker processes them)';

/** Each sender's reconcile, by CLI name. */
export const SENDER_RECONCILES: Record<ReconcileSender, SenderReconcile> = {
  github: {
    title: 'GitHub',
    maxDays: GITHUB_REDELIVERY_DAYS,
    maxDaysReason: 'GitHub redelivers a webhook delivery only within 3 days, so older ones cannot be recovered',
    jobWindowDays: GITHUB_REDELIVERY_DAYS,
    jobDescription: 'ask GitHub to redeliver the deliveries of the last 3 days the inbox is missing. Needs GITHUB_TOKEN and GITHUB_HOOK.',
    found: 'deliveries',
    added: 'missing (GitHub was asked to redeliver them; they arrive signed and are stored as usual)',
    check(config) {
      const ready = githubReady(config.senderApis.github);
      if ('missing' in ready) throw missing(ready.missing, GITHUB_NEEDS[ready.missing]!);
    },
    async run(input) {
      const ready = githubReady(input.config.senderApis.github);
      if ('missing' in ready) throw missing(ready.missing, GITHUB_NEEDS[ready.missing]!);
      const { createGithubApi, reconcileGithub } = await import('./github.js');
      return reconcileGithub({ api: createGithubApi(ready), db: input.db, since: input.since, onProgress: input.onProgress, signal: input.signal });
    },
  },
  paddle: {
    title: 'Paddle',
    maxDays: PADDLE_EVENT_DAYS,
    maxDaysReason: "Paddle's events API lists the last 90 days",
    jobWindowDays: 3,
    jobDescription: "store the Paddle events the inbox is missing (downtime past Paddle's retries). Needs PADDLE_API_KEY and PAYMENTS_PROVIDER=paddle.",
    found: 'events',
    added: STORED,
    check(config) {
      if (!keyedApi(config.senderApis.paddle))
        throw missing('PADDLE_API_KEY', 'hookrun needs a Paddle API key with read access to events (Developer tools → Authentication).');
      requireProvider(config, 'payments', 'paddle', 'Paddle');
    },
    async run(input) {
      this.check(input.config);
      const { createPaddleApi, reconcilePaddle } = await import('./paddle.js');
      return reconcilePaddle({ api: createPaddleApi(keyedApi(input.config.senderApis.paddle)!), ...input });
    },
  },
  workos: {
    title: 'WorkOS',
    maxDays: WORKOS_EVENT_DAYS,
    maxDaysReason: "WorkOS's events API serves the last 30 days",
    jobWindowDays: 3,
    jobDescription: "store the WorkOS events the inbox is missing (downtime past WorkOS's retries). Needs WORKOS_API_KEY and AUTH_PROVIDER=workos.",
    found: 'events',
    added: STORED,
    check(config) {
      if (!keyedApi(config.senderApis.workos))
        throw missing('WORKOS_API_KEY', 'hookrun needs a WorkOS secret key (sk_…, API Keys in the dashboard) to list events.');
      requireProvider(config, 'auth', 'workos', 'WorkOS');
    },
    async run(input) {
      this.check(input.config);
      const { createWorkosApi, reconcileWorkos } = await import('./workos.js');
      return reconcileWorkos({ api: createWorkosApi(keyedApi(input.config.senderApis.workos)!), ...input });
    },
  },
  clerk: {
    title: 'Clerk',
    maxDays: undefined,
    maxDaysReason: '',
    jobWindowDays: 3,
    jobDescription:
      'store the Clerk users and organizations changed since the last run as user.updated / organization.updated events for the Clerk mirror. Needs CLERK_SECRET_KEY.',
    found: 'users and organizations',
    added: STORED,
    check(config) {
      if (!keyedApi(config.senderApis.clerk))
        throw missing('CLERK_SECRET_KEY', 'hookrun needs a Clerk secret key (sk_…, API keys in the dashboard) to list users and organizations.');
      requireProvider(config, 'auth', 'clerk', 'Clerk');
    },
    async run(input) {
      this.check(input.config);
      const { createClerkApi, reconcileClerk } = await import('./clerk.js');
      return reconcileClerk({ api: createClerkApi(keyedApi(input.config.senderApis.clerk)!), ...input });
    },
  },
};

/** Whether a CLI argument or route segment names a sender with gap repair. */
export function isReconcileSender(name: string): name is ReconcileSender {
  return (RECONCILE_SENDERS as readonly string[]).includes(name);
}

/** `--since` for a sender: a duration or an ISO date (since.ts), no older than its API serves; throws a message saying what to write. */
export function parseSenderSince(sender: ReconcileSender, text: string, nowMs: number): Date {
  const since = parseSince(text, nowMs);
  const { maxDays, maxDaysReason } = SENDER_RECONCILES[sender];
  if (maxDays !== undefined && nowMs - since.getTime() > maxDays * 86_400_000 + 60_000) {
    throw new Error(`--since "${text}" is more than ${maxDays} days ago: ${maxDaysReason}. Use --since ${maxDays}d at most.`);
  }
  return since;
}
