import type { Hono } from 'hono';
import type { Config } from '../../config/config.js';
import type { AdminApiDeps } from '../admin.js';
import { html, type SafeHtml } from '../html.js';
import { csrfOf, page } from './http.js';
import { layout } from './layout.js';
import { environmentRows, platformRows, type SettingRow } from './settings-rows.js';

function settingsTable(id: string, rows: SettingRow[]): SafeHtml {
  if (rows.length === 0) return html`<p id="${id}">Nothing set.</p>`;
  return html`<div class="scroll"><table id="${id}"><thead><tr><th>setting</th><th>value</th><th>from</th><th class="wide">feature</th></tr></thead><tbody>
${rows.map((r) => html`<tr data-setting="${r.name}"${r.secret ? html` data-secret="${r.value}"` : ''}><td><code>${r.name}</code></td><td>${r.secret ? html`<i>${r.value}</i>` : r.value}</td><td>${r.source}</td><td class="wide">${r.feature}</td></tr>`)}
</tbody></table></div>`;
}

/**
 * What the Settings page reads: the admin deps, which operator-routes.ts
 * builds with the whole configuration as `settings` (the admin API's own
 * type names only `adminToken` of it).
 */
export type SettingsDeps = AdminApiDeps & { settings?: Config };

/** The effective configuration, read-only: each setting, its value (a secret only as set / not set) and where it came from. */
export function settingsPage(deps: SettingsDeps, csrf: string): string {
  const config = deps.settings;
  const body = config
    ? html`<p>What this hookrun runs with, read once at start-up: change a setting in the environment (or <code>.env</code>) or platform.json and restart. Secrets show only whether they are set.</p>
<h2>Environment</h2>${settingsTable('settings-env', environmentRows(config))}
<h2>platform.json</h2><p><code>${config.platformConfigPath}</code></p>${settingsTable('settings-platform', platformRows(config))}
<p>Every variable is described in the configuration reference (docs/configuration.md).</p>`
    : html`<p>This hookrun was started without its configuration at hand, so there is nothing to show.</p>`;
  return layout('Settings', body, csrf, undefined, 'settings');
}

/** GET /admin/settings. */
export function addSettingsPage(app: Hono, deps: SettingsDeps): void {
  app.get('/settings', (c) => page(c, settingsPage(deps, csrfOf(c, deps))));
}
