import { ConfigError } from '../errors.js';
import { MIN_SECRET_CHARS } from './secrets.js';
import type { Env } from './values.js';

/** What a signed-in person may do: a `viewer` reads everything, an `operator` may also act (replay, pause, resolve, run, …). */
export type OperatorRole = 'viewer' | 'operator';

/** The roles, least first. */
export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'operator'];

/** One named admin token: the name the audit records, the role that decides what it may do, and the secret it signs in with. */
export interface Operator {
  name: string;
  role: OperatorRole;
  /** The bearer token: never logged, never shown. */
  token: string;
}

/** A name the audit and the console show, and a session carries: letters, digits, `-` and `_`. */
const NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** The name `ADMIN_TOKEN` signs in as: it predates named tokens, and keeps working as one operator. */
export const SHARED_ADMIN_NAME = 'admin';

function parseEntry(entry: string, index: number): Operator {
  const first = entry.indexOf(':');
  const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
  const where = `ADMIN_TOKENS entry ${index + 1}`;
  if (second < 0) throw new ConfigError(`${where} is not name:role:token (e.g. alice:operator:<openssl rand -hex 32>).`);
  const name = entry.slice(0, first).trim();
  const role = entry.slice(first + 1, second).trim();
  const token = entry.slice(second + 1).trim();
  if (!NAME.test(name)) throw new ConfigError(`${where}: the name "${name.slice(0, 40)}" must be 1-32 letters, digits, "-" or "_".`);
  if (!(OPERATOR_ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`${where} (${name}): the role "${role.slice(0, 20)}" must be viewer (reads everything) or operator (may act).`);
  }
  if (token.length < MIN_SECRET_CHARS) {
    throw new ConfigError(
      `${where} (${name}): the token is shorter than ${MIN_SECRET_CHARS} characters: anyone who can reach /api or /admin could guess it. Use a long random value (openssl rand -hex 32).`,
    );
  }
  return { name, role: role as OperatorRole, token };
}

/**
 * The people who may use `/api` and `/admin`: `ADMIN_TOKENS`
 * (`name:role:token,…`) and `ADMIN_TOKEN` as the operator `admin`, so a
 * deployment with one shared token keeps working. A name or a token used
 * twice is refused: the audit must say who acted, and a token must say who it is.
 */
export function readOperators(env: Env, adminToken: string | undefined): Operator[] {
  const operators = (env.ADMIN_TOKENS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map(parseEntry);
  if (adminToken !== undefined) operators.push({ name: SHARED_ADMIN_NAME, role: 'operator', token: adminToken });
  const names = new Set<string>();
  const tokens = new Set<string>();
  for (const operator of operators) {
    if (names.has(operator.name)) {
      const fix = operator.name === SHARED_ADMIN_NAME ? ' (ADMIN_TOKEN signs in as "admin": rename the entry, or unset ADMIN_TOKEN)' : '';
      throw new ConfigError(`ADMIN_TOKENS names "${operator.name}" twice${fix}: each person needs their own name for the audit.`);
    }
    if (tokens.has(operator.token))
      throw new ConfigError(`ADMIN_TOKENS gives ${operator.name} a token another entry (or ADMIN_TOKEN) has: give each person their own.`);
    names.add(operator.name);
    tokens.add(operator.token);
  }
  return operators;
}
