/**
 * The console's only script, served as /admin/assets/console.js (CSP
 * `script-src 'self'`; no inline script anywhere). On a page marked
 * `data-live` it listens to /admin/stream (found from its own URL, so under a
 * mount path too) and, at most once a second after
 * events arrive, refetches the page's own URL and swaps each
 * `[data-live-region][id]` element for the fetched one (parsed by DOMParser
 * from the server's escaped HTML). It never builds HTML from an event: the
 * stream only says "something changed". The Pause button's state is kept in
 * localStorage; while paused the page does not change and the button counts
 * what arrived. `body[data-live-state]` says where it stands (connecting, on,
 * paused, reconnecting, logged-out), for people and for tests.
 */
export const CONSOLE_SCRIPT = `(() => {
  'use strict';
  const body = document.body;
  const button = document.getElementById('live-toggle');
  if (!body || !body.hasAttribute('data-live') || !button || typeof EventSource !== 'function') return;
  // The console's root from this script's own URL (<root>assets/console.js): right at /admin/ and under a mount path alike.
  const root = new URL('..', document.currentScript.src).pathname;
  const KEY = 'hookrun.console.live';
  const MIN_GAP_MS = 1000;
  let paused = false;
  try { paused = localStorage.getItem(KEY) === 'paused'; } catch (e) { /* storage refused: live by default */ }
  let missed = 0;
  let timer = 0;
  let last = 0;
  let busy = false;
  let again = false;
  let connected = false;
  let source = null;

  function show() {
    body.setAttribute('data-live-state', !source ? 'logged-out' : paused ? 'paused' : connected ? 'on' : 'connecting');
    button.textContent = paused ? (missed > 0 ? 'Resume live updates (' + missed + ' new)' : 'Resume live updates') : 'Pause live updates';
    button.setAttribute('aria-pressed', String(paused));
    button.hidden = false;
  }

  function focusedIn(region) {
    const active = document.activeElement;
    if (region.querySelector('input[type=checkbox]:checked')) return true; // a selection being made (rows to replay) is kept
    return active && active !== body && region.contains(active) && active.matches('input:not([type=checkbox]), select, textarea');
  }

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    last = Date.now();
    try {
      const response = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'text/html' } });
      if (response.redirected && new URL(response.url).pathname === root + 'login') { stop(); return; }
      if (!response.ok) return;
      const fetched = new DOMParser().parseFromString(await response.text(), 'text/html');
      for (const region of Array.from(document.querySelectorAll('[data-live-region][id]'))) {
        const fresh = fetched.getElementById(region.id);
        if (!fresh || !fresh.hasAttribute('data-live-region') || focusedIn(region)) continue;
        for (const open of Array.from(region.querySelectorAll('details[open][id]'))) fresh.querySelector('#' + CSS.escape(open.id))?.setAttribute('open', '');
        region.replaceWith(document.importNode(fresh, true));
      }
      body.setAttribute('data-live-refreshes', String(Number(body.getAttribute('data-live-refreshes') || 0) + 1));
    } catch (e) {
      /* offline or the server restarting: the next event tries again */
    } finally {
      busy = false;
      if (again) { again = false; schedule(); }
    }
  }

  function schedule() {
    if (paused) { missed++; show(); return; }
    if (timer) return;
    timer = setTimeout(() => { timer = 0; refresh(); }, Math.max(0, MIN_GAP_MS - (Date.now() - last)));
  }

  function stop() {
    if (source) source.close();
    source = null;
    show();
  }

  button.addEventListener('click', () => {
    paused = !paused;
    try { localStorage.setItem(KEY, paused ? 'paused' : 'on'); } catch (e) { /* kept for this page only */ }
    if (!paused && missed > 0) { missed = 0; schedule(); }
    show();
  });

  source = new EventSource(root + 'stream');
  source.addEventListener('ready', () => { connected = true; show(); });
  source.addEventListener('event', schedule);
  source.addEventListener('error', () => {
    connected = false;
    if (source && source.readyState === EventSource.CLOSED) { stop(); return; }
    if (source) body.setAttribute('data-live-state', paused ? 'paused' : 'reconnecting');
  });
  show();
})();
`;
