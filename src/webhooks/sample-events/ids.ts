import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string, the alphabet both Stripe and Clerk ids use. */
export function randomBase62(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[bytes[i]! % 62];
  return out;
}

/** A fresh provider-style id: `user_2x…` (Clerk, 27 chars after the prefix), `evt_1Q…` (Stripe, 24). */
export function providerId(prefix: string, length: number = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

/** A fresh UUID, the primary key type of a typical Supabase table. */
export function uuid(): string {
  return randomUUID();
}

/** A plausible person, so samples read like real data in the dashboard. */
export function samplePerson(): { firstName: string; lastName: string; email: string } {
  const first = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken', 'Radia', 'Linus'];
  const last = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Thompson', 'Perlman', 'Torvalds'];
  const pick = <T>(list: T[]): T => list[randomBytes(1)[0]! % list.length]!;
  const firstName = pick(first);
  const lastName = pick(last);
  const email = `${firstName}.${lastName}+${randomBase62(6)}@example.com`.toLowerCase();
  return { firstName, lastName, email };
}

/** Deep-merge `overrides` into `base`: objects merge, everything else (arrays included) replaces. */
export function deepMerge<T>(base: T, overrides: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(overrides)) return (overrides === undefined ? base : overrides) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    out[key] = key in out ? deepMerge(out[key], value) : value;
  }
  return out as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
