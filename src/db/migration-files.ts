import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One committed drizzle-kit migration, read as drizzle's migrator reads it (same hash, same time). */
export interface Migration {
  tag: string;
  /** The journal's `when`: what the bookkeeping row records as `created_at`. */
  when: number;
  /** sha256 of the file, as drizzle records it. */
  hash: string;
  statements: string[];
}

/** The migrations of a drizzle-kit folder, in journal order. */
export function readMigrations(folder: string): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string; when: number }> };
  return journal.entries.map(({ tag, when }) => {
    const text = readFileSync(join(folder, `${tag}.sql`), 'utf8');
    const statements = text.split('--> statement-breakpoint').filter((statement) => statement.trim() !== '');
    return { tag, when, hash: createHash('sha256').update(text).digest('hex'), statements };
  });
}
