import type { Hono } from 'hono';
import { MIRROR_TABLES, listMirrorRows, type MirrorTable } from '../../db/mirror-read.js';
import type { AdminApiDeps } from '../admin.js';
import { csrfOf, page } from './http.js';
import { messagePage } from './layout.js';
import { html } from '../html.js';
import { layout, time } from './layout.js';

/** A mirror table (users, customers, …) as the handlers left it, most recently changed first, searchable. */
export function mirrorPage(table: string, rows: Array<Record<string, unknown>>, search: string | undefined, csrf: string): string {
  const columns = MIRROR_TABLES[table as keyof typeof MIRROR_TABLES] as readonly string[];
  const cell = (value: unknown) => (value instanceof Date ? time(value) : value === null || value === undefined ? '' : String(value));
  const body = html`<p>${Object.keys(MIRROR_TABLES).map((t, i) => html`${i ? ' · ' : ''}${t === table ? html`<b>${t}</b>` : html`<a href="/admin/mirror/${t}">${t}</a>`}`)}</p>
<form class="search" method="get" action="/admin/mirror/${table}" role="search"><input type="search" name="search" value="${search ?? ''}" placeholder="id, email, name or *_id contains" aria-label="search" size="32"><button type="submit">Search</button></form>
${
  rows.length === 0
    ? html`<p>No rows${search ? ' match' : html` yet. Send one with <code>hookrun send --story</code>`}.</p>`
    : html`<div class="scroll"><table id="mirror"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>
${rows.map((r) => html`<tr>${columns.map((c) => html`<td>${cell(r[c])}</td>`)}</tr>`)}
</tbody></table></div>`
}`;
  return layout(`Mirror: ${table}`, body, csrf);
}

/** GET /admin/mirror/{table}. */
export function addMirrorRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db } = deps;
  app.get('/mirror/:table', async (c) => {
    const table = c.req.param('table');
    if (!Object.hasOwn(MIRROR_TABLES, table))
      return page(
        c,
        messagePage('Not found', `No mirror table "${table.slice(0, 40)}". Tables: ${Object.keys(MIRROR_TABLES).join(', ')}.`, csrfOf(c, deps)),
        404,
      );
    const search = c.req.query('search')?.trim().slice(0, 100) || undefined;
    return page(c, mirrorPage(table, await listMirrorRows(db, table as MirrorTable, { limit: 100, search }), search, csrfOf(c, deps)));
  });
}
