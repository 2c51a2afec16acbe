import type { Hono } from 'hono';
import { countMirrorRows } from '../../db/mirror-counts.js';
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
  const body = html`<p><a href="/admin/mirrors">← All mirrors</a> · ${Object.keys(MIRROR_TABLES).map((t, i) => html`${i ? ' · ' : ''}${t === table ? html`<b>${t}</b>` : html`<a href="/admin/mirror/${t}">${t}</a>`}`)}</p>
<form class="search" method="get" action="/admin/mirror/${table}" role="search"><input type="search" name="search" value="${search ?? ''}" placeholder="id, email, name or *_id contains" aria-label="search" size="32"><button type="submit">Search</button></form>
${
  rows.length === 0
    ? html`<p>No rows${search ? ' match' : html` yet. Send one with <code>hookrun send --story</code>`}.</p>`
    : html`<div class="scroll"><table id="mirror"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>
${rows.map((r) => html`<tr>${columns.map((c) => (c === 'id' || c.endsWith('_id') ? html`<td class="clip" title="${cell(r[c])}">${cell(r[c])}</td>` : html`<td>${cell(r[c])}</td>`))}</tr>`)}
</tbody></table></div>`
}`;
  return layout(`Mirror: ${table}`, body, csrf, undefined, 'mirrors');
}

/** The mirror tables the shipped handlers keep, with their row counts and the columns each page shows. */
export function mirrorsIndexPage(counts: Record<MirrorTable, number>, csrf: string): string {
  const body = html`<p>What the shipped handlers wrote: each mirror table is kept from the senders' events (users, organizations, customers, …).</p>
<div class="scroll"><table id="mirrors"><thead><tr><th>table</th><th>rows</th><th class="wide">columns shown</th></tr></thead><tbody>
${(Object.keys(MIRROR_TABLES) as MirrorTable[]).map((t) => html`<tr data-table="${t}"><td><a href="/admin/mirror/${t}">${t}</a></td><td class="num">${counts[t]}</td><td class="wide">${MIRROR_TABLES[t].join(', ')}</td></tr>`)}
</tbody></table></div>`;
  return layout('Mirrors', body, csrf, undefined, 'mirrors');
}

/** GET /admin/mirrors (the index) and /admin/mirror/{table}. */
export function addMirrorRoutes(app: Hono, deps: AdminApiDeps): void {
  const { db } = deps;
  app.get('/mirrors', async (c) => page(c, mirrorsIndexPage(await countMirrorRows(db), csrfOf(c, deps))));
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
