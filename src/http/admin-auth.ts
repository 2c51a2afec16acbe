import { createHmac, randomBytes } from 'node:crypto';
import { secureEqual } from '../secure-compare.js';

/** How long a dashboard login lasts. */
export const SESSION_SECONDS = 12 * 60 * 60;

function mac(adminToken: string, purpose: string, value: string): string {
  return createHmac('sha256', adminToken).update(`hookrun-admin:${purpose}:${value}`).digest('base64url');
}

/**
 * A dashboard session value: `<expires unix seconds>.<random id>.<HMAC(ADMIN_TOKEN, both)>`.
 * It proves the holder knew the token without containing it (a stolen cookie
 * does not reveal ADMIN_TOKEN and dies at expiry), and rotating ADMIN_TOKEN
 * ends every session. The 128-bit random id makes every login its own
 * session (two in one second do not share a cookie, and logging one out
 * leaves the other). Only logouts are stored, so it works across instances.
 */
export function createSession(adminToken: string, nowMs: number): string {
  const body = `${Math.floor(nowMs / 1000) + SESSION_SECONDS}.${randomBytes(16).toString('base64url')}`;
  return `${body}.${mac(adminToken, 'session', body)}`;
}

/** True when a session value was made with this ADMIN_TOKEN and has not expired. */
export function sessionIsValid(value: string | undefined, adminToken: string, nowMs: number): boolean {
  const match = /^((\d{1,12})\.[A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return false;
  const [, body, expires, signature] = match as unknown as [string, string, string, string];
  if (!secureEqual(signature, mac(adminToken, 'session', body))) return false;
  return Number(expires) * 1000 > nowMs;
}

/**
 * The CSRF token of a session (synchronizer pattern without server state): an
 * HMAC of the session value, embedded in every form and checked on every POST.
 * A cross-site page cannot read it; SameSite=Strict and the Origin check are
 * the other two layers.
 */
export function csrfToken(session: string, adminToken: string): string {
  return mac(adminToken, 'csrf', session);
}

/** Check a posted CSRF token against the session it claims to belong to. */
export function csrfTokenMatches(offered: string | undefined, session: string, adminToken: string): boolean {
  return secureEqual(offered, csrfToken(session, adminToken));
}
