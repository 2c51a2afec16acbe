import { html, trusted, type SafeHtml } from '../html.js';
import { toneOfStatus } from './flash.js';
import { SIGNED_IN_MARK } from './signed-in.js';

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
header{background:#111827;color:#fff;padding:8px 24px;display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}header .end{margin-left:auto;display:flex;gap:8px;align-items:center;order:2}
header .live-state{font-size:12px;opacity:.85;max-width:40ch}body[data-live-state=stopped] header .live-state{opacity:1;color:#fecaca}
header nav{display:flex;gap:4px 14px;flex-wrap:wrap;order:1}header nav a{font-weight:400;opacity:.85;padding:2px 0}header nav a.on{opacity:1;font-weight:600;text-decoration:underline}
h1{font-size:20px;margin:4px 0 12px}main{padding:16px 24px;max-width:1200px}h2{margin:24px 0 8px;font-size:16px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f3f4f6;font-weight:600}td.num{text-align:right}pre{background:#fff;border:1px solid #e5e7eb;padding:12px;overflow:auto;max-height:70vh;white-space:pre-wrap;overflow-wrap:anywhere}
.status{display:inline-block;padding:1px 8px;border-radius:10px;background:#e5e7eb;white-space:nowrap}.t-success{background:#d1fae5}.t-failure{background:#fee2e2}.t-warning{background:#fef3c7}.t-info{background:#e0e7ff}
.counts{display:flex;gap:8px;flex-wrap:wrap}.counts a{background:#fff;border:1px solid #e5e7eb;padding:6px 12px;border-radius:6px;text-decoration:none;color:inherit}
.counts a.on{border-color:#111827}.counts a[data-tone=success]{border-left:4px solid #10b981}.counts a[data-tone=failure]{border-left:4px solid #dc2626}.counts a[data-tone=warning]{border-left:4px solid #f59e0b}
.verdict{margin:0 0 12px;font-size:15px}.notice,.error,.warn,.info{padding:8px 12px;border:1px solid}.notice{background:#ecfdf5;border-color:#6ee7b7}.error{background:#fef2f2;border-color:#fca5a5}.warn{background:#fffbeb;border-color:#fcd34d}.info{background:#eff6ff;border-color:#bfdbfe}
form.inline{display:inline}button{cursor:pointer}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#fff;padding:12px}dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}.scroll{overflow-x:auto;max-width:100%}.ago{color:#6b7280;font-size:12px}form.search{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0}
form.search input{padding:4px 8px}td{overflow-wrap:anywhere}
td.id,td.nowrap{white-space:nowrap;overflow-wrap:normal}td.clip{white-space:nowrap;overflow-wrap:normal;overflow:hidden;text-overflow:ellipsis;max-width:28ch}
td.rest{max-width:0;width:100%}.clip-line{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
html[data-role=viewer] form[method=post]:not(.session){display:none!important}.signed-in{opacity:.85;font-size:13px}
figure.chart{margin:0;background:#fff;border:1px solid #e5e7eb;padding:8px}figcaption{font-size:13px;color:#374151}
@media (max-width:640px){header,main{padding-left:10px;padding-right:10px}td time{display:none}header nav{order:3;flex-basis:100%;gap:2px 12px}.wide{display:none}td,th{padding:4px 5px}pre{max-height:50vh}dl{grid-template-columns:1fr}dt{margin-top:6px}}`;

/** The console's pages, in the order the navigation shows them: [key, path, label]. */
export const NAV = [
  ['overview', '/admin', 'Overview'],
  ['events', '/admin/events', 'Events'],
  ['handlers', '/admin/handlers', 'Handlers'],
  ['jobs', '/admin/jobs', 'Jobs'],
  ['senders', '/admin/senders', 'Senders'],
  ['issues', '/admin/issues', 'Issues'],
  ['replays', '/admin/replays', 'Replays'],
  ['audit', '/admin/audit', 'Audit'],
  ['mirrors', '/admin/mirrors', 'Mirrors'],
  ['settings', '/admin/settings', 'Settings'],
] as const;

/** A page of the console, as NAV names it. */
export type NavKey = (typeof NAV)[number][0];

/** The navigation bar of a logged-in page, `active` marked for the reader and for screen readers. */
function nav(active: NavKey | undefined): SafeHtml {
  return html`<nav aria-label="console">${NAV.map(([key, path, label]) => html`<a href="${path}"${key === active ? trusted(' aria-current="page" class="on"') : ''}>${label}</a>`)}</nav>`;
}

/** Whether a page body has regions the live script swaps (elements with `data-live-region`). */
const LIVE_REGION = /<[a-z]+ [^<>]*\bdata-live-region\b/;

/**
 * The page frame; `csrf` present means a logged-in page (the navigation, the
 * logout button and the live-updates script); `active` is the navigation
 * entry it belongs to. A body with `data-live-region` elements is marked
 * `data-live`: /admin/assets/console.js then refetches the page as events
 * arrive and swaps those regions. `refreshSeconds` reloads the page (a meta
 * refresh) for pages that want it without script.
 */
export function layout(title: string, body: SafeHtml, csrf?: string, refreshSeconds?: number, active?: NavKey): string {
  const live = csrf !== undefined && LIVE_REGION.test(body.toString());
  const end = csrf
    ? html`<div class="end"><span id="live-state" class="live-state" aria-live="polite" hidden></span><button type="button" id="live-toggle" hidden aria-pressed="false">Live updates</button>${trusted(SIGNED_IN_MARK)}<form method="post" action="/admin/logout" class="inline session"><input type="hidden" name="csrf" value="${csrf}"><button>Log out</button></form></div>${nav(active)}`
    : '';
  const refresh = refreshSeconds ? html`<meta http-equiv="refresh" content="${refreshSeconds}">` : '';
  const script = csrf ? html`<script src="/admin/assets/console.js" defer></script>` : '';
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${refresh}
<title>${title} · hookrun</title><style>${trusted(STYLE)}</style>${script}</head>
<body${live ? trusted(' data-live') : ''}><header><a href="/admin">hookrun</a>${end}</header><main><h1>${title}</h1>${body}</main></body></html>`.toString();
}

/** A status word as a badge, coloured by its tone (failure red, success green, waiting amber). */
export const status = (value: string) => html`<span class="status s-${value} t-${toneOfStatus(value)}">${value}</span>`;
export const time = (value: Date | string | null | undefined) =>
  value
    ? new Date(value)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, 'Z')
    : '-';

/** "3 min ago" / "in 2 h", from the server's clock, so a reader need not do UTC arithmetic. */
export function relativeTime(value: Date | string, nowMs: number): string {
  const seconds = Math.round((new Date(value).getTime() - nowMs) / 1000);
  const abs = Math.abs(seconds);
  const [n, unit] =
    abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.round(abs / 60), 'min'] : abs < 172_800 ? [Math.round(abs / 3600), 'h'] : [Math.round(abs / 86_400), 'd'];
  if (abs < 5) return 'just now';
  return seconds < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** An absolute UTC time with its relative form beside it. */
export const when = (value: Date | string | null | undefined, nowMs: number) =>
  value ? html`<time datetime="${new Date(value).toISOString()}">${time(value)}</time> <span class="ago">${relativeTime(value, nowMs)}</span>` : '-';

/** The login form; `error` is shown above it after a wrong token. */
export function loginPage(error?: string): string {
  return layout(
    'Log in',
    html`${error ? html`<p class="error">${error}</p>` : ''}
<form method="post" action="/admin/login" class="session"><p><label>Your admin token (ADMIN_TOKEN, or yours from ADMIN_TOKENS)<br><input type="password" name="token" autocomplete="current-password" required size="50" autofocus></label></p>
<p><button type="submit">Log in</button></p></form>`,
  );
}

/** A page that only says something (not configured, not found, conflict). */
export function messagePage(title: string, message: string, csrf?: string): string {
  return layout(title, html`<p class="error">${message}</p><p><a href="/admin">Back to the overview</a></p>`, csrf);
}
