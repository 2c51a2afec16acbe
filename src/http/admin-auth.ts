import { createHmac, randomBytes } from 'node:crypto';
import type { Operator } from '../config/operators.js';
import { secureEqual } from '../secure-compare.js';

/** How long a dashboard login lasts. */
export const SESSION_SECONDS = 12 * 60 * 60;

function mac(token: string, purpose: string, value: string): string {
  return createHmac('sha256', token).update(`hookrun-admin:${purpose}:${value}`).digest('base64url');
}

/**
 * The operator a bearer token signs in as. Every token is compared, in
 * constant time, whichever matches: how long the check takes does not tell
 * which names exist or where a match was.
 */
export function operatorByToken(operators: readonly Operator[], offered: string | undefined): Operator | undefined {
  let found: Operator | undefined;
  for (const operator of operators) if (secureEqual(offered, operator.token) && found === undefined) found = operator;
  return found;
}

/**
 * A dashboard session value: `<expires unix seconds>.<random id>.<operator name>.<HMAC(their token, all three)>`.
 * It proves the holder knew that operator's token without containing it (a
 * stolen cookie does not reveal it and dies at expiry), and rotating one
 * person's token ends their sessions only. The 128-bit random id makes every
 * login its own session (two in one second do not share a cookie, and logging
 * one out leaves the other). Only logouts are stored, so it works across instances.
 */
export function createSession(operator: Operator, nowMs: number): string {
  const body = `${Math.floor(nowMs / 1000) + SESSION_SECONDS}.${randomBytes(16).toString('base64url')}.${operator.name}`;
  return `${body}.${mac(operator.token, 'session', body)}`;
}

/** The operator a session value was made for, when it is signed with their current token and has not expired. */
export function sessionOperator(value: string | undefined, operators: readonly Operator[], nowMs: number): Operator | undefined {
  const match = /^((\d{1,12})\.[A-Za-z0-9_-]{22}\.([A-Za-z0-9_-]{1,32}))\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return undefined;
  const [, body, expires, name, signature] = match as unknown as [string, string, string, string, string];
  const operator = operators.find((o) => o.name === name);
  if (!operator || !secureEqual(signature, mac(operator.token, 'session', body))) return undefined;
  return Number(expires) * 1000 > nowMs ? operator : undefined;
}

/**
 * The CSRF token of a session (synchronizer pattern without server state): an
 * HMAC of the session value with its operator's token, embedded in every form
 * and checked on every POST. A cross-site page cannot read it; SameSite=Strict
 * and the Origin check are the other two layers.
 */
export function csrfToken(session: string, operator: Operator): string {
  return mac(operator.token, 'csrf', session);
}

/** Check a posted CSRF token against the session it claims to belong to. */
export function csrfTokenMatches(offered: string | undefined, session: string, operator: Operator): boolean {
  return secureEqual(offered, csrfToken(session, operator));
}
