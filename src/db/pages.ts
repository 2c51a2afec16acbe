import type { Queryable } from './database.js';

/** Insert a scratch page and return its id; keep-alive writes one so the database sees activity. */
export async function insertPage(db: Queryable, title: string): Promise<string> {
  const rows = await db.query<{ id: string }>('INSERT INTO hookrun.pages (title) VALUES ($1) RETURNING id', [title]);
  return rows[0]!.id;
}

/** Delete one page by id; returns whether a row went away. */
export async function deletePage(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>('DELETE FROM hookrun.pages WHERE id = $1 RETURNING id', [id]);
  return rows.length === 1;
}

/** How many pages exist; tests use it to prove keep-alive leaves nothing behind. */
export async function countPages(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM hookrun.pages');
  return rows[0]!.n;
}
