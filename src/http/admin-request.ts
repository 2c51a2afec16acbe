import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError } from '../errors.js';
import { InstantError, parseInstant } from '../time/instant.js';
import { firstIssue } from './admin-schemas.js';

/** Parse with zod; a bad value is a 400 `bad_request` that names the field. */
export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new AppError('bad_request', firstIssue(result.error));
}

/** The `:id` of an event route: a 400 naming it when it is not a whole number. */
export function eventId(c: Context): number {
  const raw = c.req.param('id') ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw new AppError('bad_request', `Event id must be a positive whole number, not "${raw.slice(0, 40)}".`);
  return Number(raw);
}

/** A date or time the caller wrote (`from`, `to`), read by the one rule of time/instant.ts; a 400 naming it otherwise. */
export function requestInstant(text: string, name: string): Date {
  try {
    return parseInstant(text, name);
  } catch (error) {
    if (error instanceof InstantError) throw new AppError('bad_request', error.message);
    throw error;
  }
}

/** The request's JSON body: a 400 saying to send one when it is not JSON. */
export async function readJson(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new AppError('bad_request', 'Send a JSON body, e.g. {"status":"dead"}.');
  }
}
