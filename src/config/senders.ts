import { z } from 'zod';
import { isLoopbackHost, parseSetting, type Env } from './values.js';
import { ConfigError } from '../errors.js';

/** Which GitHub webhook `hookrun reconcile github` lists deliveries of: a repository's or an organization's. */
export type GithubHook = { kind: 'repo'; owner: string; repo: string; id: string } | { kind: 'org'; org: string; id: string };

/** `GITHUB_TOKEN`, `GITHUB_HOOK`, `GITHUB_API_BASE`: each may be unset; the reconcile names the one it misses. */
export interface GithubApiSettings {
  /** Holds a credential: never log it. */
  token: string | undefined;
  hook: GithubHook | undefined;
  apiBase: URL;
}

/** A sender API reached with one bearer key (Paddle, WorkOS, Clerk); the key undefined when its variable is unset. */
export interface KeyedApiSettings {
  /** Holds a credential: never log it. */
  key: string | undefined;
  apiBase: URL;
}

/**
 * The senders' own APIs gap repair calls (`hookrun reconcile github|paddle|workos|clerk`
 * and their jobs): read once here so a malformed value stops start-up, while
 * an unset key only stops the reconcile that needs it (it names the variable).
 */
export interface SenderApiSettings {
  github: GithubApiSettings;
  paddle: KeyedApiSettings;
  workos: KeyedApiSettings;
  clerk: KeyedApiSettings;
}

/**
 * An API base (`https://api.github.com`, or a GitHub Enterprise `https://ghe.example.com/api/v3`):
 * http(s), any path (no trailing slash kept), `http://` only to this machine so the key never travels unencrypted.
 */
export function readApiBase(env: Env, name: string, fallback: string, keyName: string): URL {
  const raw = env[name]?.trim();
  if (!raw) return new URL(fallback);
  const url = parseSetting(
    z.url({ protocol: /^https?$/ }).transform((value) => new URL(value)),
    raw,
    `${name}="${raw}" is not valid: use an http(s) URL like ${fallback}, or unset it for ${fallback}.`,
  );
  if (url.search || url.hash) throw new ConfigError(`${name}="${raw}" is not valid: a base URL has no ?query or #fragment (e.g. ${fallback}).`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(
      `${name}=${url.origin} would send ${keyName} unencrypted: use https://, or http:// only to this machine (127.0.0.0/8, ::1, localhost), or unset it for ${fallback}.`,
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

const GITHUB_HOOK_EXAMPLE = 'owner/repo/123456789 (a repository webhook) or org/acme/123456789 (an organization webhook)';

/** `GITHUB_HOOK`: `<owner>/<repo>/<hook id>`, or `org/<organization>/<hook id>` for an organization's webhook. */
export function readGithubHook(env: Env): GithubHook | undefined {
  const raw = env.GITHUB_HOOK?.trim();
  if (!raw) return undefined;
  const match = /^([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})\/(\d{1,20})$/.exec(raw);
  if (!match) throw new ConfigError(`GITHUB_HOOK="${raw}" is not valid: use ${GITHUB_HOOK_EXAMPLE}; the id is in the webhook's settings URL.`);
  const [, first, second, id] = match as unknown as [string, string, string, string];
  return first === 'org' ? { kind: 'org', org: second, id } : { kind: 'repo', owner: first, repo: second, id };
}

function readKeyed(env: Env, keyName: string, baseName: string, fallback: string): KeyedApiSettings {
  const key = env[keyName]?.trim() || undefined;
  if (key && /\s/.test(key)) throw new ConfigError(`${keyName} holds whitespace: paste the key alone, as the provider's dashboard shows it.`);
  return { key, apiBase: readApiBase(env, baseName, fallback, keyName) };
}

/** Every sender API setting, checked for shape. */
export function readSenderApis(env: Env): SenderApiSettings {
  return {
    github: {
      token: env.GITHUB_TOKEN?.trim() || undefined,
      hook: readGithubHook(env),
      apiBase: readApiBase(env, 'GITHUB_API_BASE', 'https://api.github.com', 'GITHUB_TOKEN'),
    },
    paddle: readKeyed(env, 'PADDLE_API_KEY', 'PADDLE_API_BASE', 'https://api.paddle.com'),
    workos: readKeyed(env, 'WORKOS_API_KEY', 'WORKOS_API_BASE', 'https://api.workos.com'),
    clerk: readKeyed(env, 'CLERK_SECRET_KEY', 'CLERK_API_BASE', 'https://api.clerk.com'),
  };
}
