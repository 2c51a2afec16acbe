import { createHmac } from 'node:crypto';
import { secureEqual } from '../secure-compare.js';

/** How long a dashboard login lasts. */
export const SESSION_SECONDS = 12 * 60 * 60;

function mac(adminToken: string, purpose: string, value: string): string {
  return createHmac('sha256', adminToken).update(`hookrun-admin:${purpose}:${value}`).digest('base64url');
}

/**
 * A dashboard session value: `<expires unix seconds>.<HMAC(ADMIN_TOKEN, expires)>`.
 * It proves the holder knew the token without containing it (a stolen cookie
 * does not reveal ADMIN_TOKEN and dies at expiry), and rotating ADMIN_TOKEN
 * ends every session. Nothing is stored server side, so it works across instances.
 */
export function createSession(adminToken: string, nowMs: number): string {
  const expires = String(Math.floor(nowMs / 1000) + SESSION_SECONDS);
  return `${expires}.${mac(adminToken, 'session', expires)}`;
}

/** True when a session value was made with this ADMIN_TOKEN and has not expired. */
export function sessionIsValid(value: string | undefined, adminToken: string, nowMs: number): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return false;
  const [, expires, signature] = match as unknown as [string, string, string];
  if (!secureEqual(signature, mac(adminToken, 'session', expires))) return false;
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
