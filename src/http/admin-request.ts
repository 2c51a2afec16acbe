import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError } from '../errors.js';
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

/** A date the caller wrote as ISO (`2026-11-20`, `2026-11-20T08:00:00Z`); a 400 naming it otherwise. */
export function isoDate(text: string, name: string): Date {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms))
    throw new AppError('bad_request', `The range's ${name} "${text.slice(0, 40)}" is not an ISO date like 2026-11-20 or 2026-11-20T08:00:00Z.`);
  return new Date(ms);
}

/** The request's JSON body: a 400 saying to send one when it is not JSON. */
export async function readJson(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new AppError('bad_request', 'Send a JSON body, e.g. {"status":"dead"}.');
  }
}
