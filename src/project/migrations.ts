import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../db/database.js';
import { ConfigError } from '../errors.js';
import { displayPath } from '../module-files.js';

/** Any fixed number other than hookrun's own: one instance applies a project's migrations at a time. */
const PROJECT_MIGRATION_LOCK_KEY = 7_340_022;

/** One `migrations/<name>.sql` of a project. */
interface ProjectMigration {
  name: string;
  path: string;
  hash: string;
  statements: string[];
}

function readProjectMigrations(dir: string): ProjectMigration[] {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return files.map((name) => {
    const text = readFileSync(join(dir, name), 'utf8');
    const statements = text.split(/^\s*-->\s*statement-breakpoint\s*$/m).filter((s) => s.replace(/--[^\n]*/g, '').trim() !== '');
    return { name, path: join(dir, name), hash: createHash('sha256').update(text).digest('hex'), statements };
  });
}

/**
 * Apply a project's own migrations (`<project>/migrations/*.sql`, in file
 * name order) that are not yet applied, each recorded in
 * `hookrun.project_migrations`, all in one transaction under an advisory
 * lock (N instances: one applies them). A file holding several statements
 * separates them with a `--> statement-breakpoint` line, as drizzle-kit
 * writes them. An applied file that changed stops start-up: add a new file.
 * Returns the names applied.
 */
export async function applyProjectMigrations(db: Pick<Database, 'transaction'>, projectDir: string): Promise<string[]> {
  const migrations = readProjectMigrations(join(projectDir, 'migrations'));
  if (migrations.length === 0) return [];
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [PROJECT_MIGRATION_LOCK_KEY]);
    const done = new Map((await tx.query<{ name: string; hash: string }>('SELECT name, hash FROM hookrun.project_migrations')).map((r) => [r.name, r.hash]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const hash = done.get(migration.name);
      if (hash === migration.hash) continue;
      if (hash !== undefined)
        throw new ConfigError(`${displayPath(migration.path)} changed after it was applied; leave applied migrations as they are and add a new file.`);
      for (const statement of migration.statements) {
        try {
          await tx.query(statement);
        } catch (error) {
          throw new ConfigError(`${displayPath(migration.path)} failed, nothing of it applied: ${(error as Error).message}`);
        }
      }
      await tx.query('INSERT INTO hookrun.project_migrations (name, hash) VALUES ($1, $2)', [migration.name, migration.hash]);
      applied.push(migration.name);
    }
    return applied;
  });
}
