/**
 * The console's only script, served as /admin/assets/console.js (CSP
 * `script-src 'self'`; no inline script anywhere). On a page marked
 * `data-live` it follows /admin/stream (found from its own URL, so under a
 * mount path too) and, at most once a second after events arrive, refetches
 * the page's own URL and swaps each `[data-live-region][id]` element for the
 * fetched one (parsed by DOMParser from the server's escaped HTML). It never
 * builds HTML from an event: the stream only says "something changed".
 *
 * One stream per browser, whatever the number of tabs: the tabs elect a
 * leader with a Web Lock, the leader alone holds the EventSource and passes
 * each event and the stream's state to the others over a BroadcastChannel;
 * when it closes, the lock goes to a waiting tab, which opens the stream.
 * HTTP/1.1 allows 6 connections per host, so a stream per tab would let 6
 * tabs hang the 7th. Without Web Locks (a page not served over HTTPS or
 * localhost) each tab holds its own stream, as before.
 *
 * `body[data-live-state]` and `#live-state` say where the page stands, for
 * people and for tests: connecting, live, paused, reconnecting, or stopped
 * (with the server's reason: logged out, too many streams, none served).
 * The Pause button shows only while live or paused, so it never offers to
 * pause what is not live; the choice is kept in localStorage, and while
 * paused the page does not change and the button counts what arrived.
 */
export const CONSOLE_SCRIPT = `(() => {
  'use strict';
  const body = document.body;
  const button = document.getElementById('live-toggle');
  const label = document.getElementById('live-state');
  if (!body || !body.hasAttribute('data-live') || !button || !label || typeof EventSource !== 'function') return;
  // The console's root from this script's own URL (<root>assets/console.js): right at /admin/ and under a mount path alike.
  const root = new URL('..', document.currentScript.src).pathname;
  const KEY = 'hookrun.console.live';
  const SHARED = 'hookrun.console.stream:' + root;
  const MIN_GAP_MS = 1000;
  const RETRY_MS = 5000;
  let paused = false;
  try { paused = localStorage.getItem(KEY) === 'paused'; } catch (e) { /* storage refused: live by default */ }
  let missed = 0;
  let timer = 0;
  let last = 0;
  let busy = false;
  let again = false;
  // The stream as every tab of this browser sees it: connecting, live, reconnecting or stopped (with why).
  let stream = { state: 'connecting', why: '' };
  let leading = false;
  let source = null;
  // The last event id the stream reached, known to every tab: a tab that takes the stream over resumes from it, so nothing sent meanwhile is missed.
  let seen = '';
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(SHARED) : null;

  const TEXT = {
    connecting: () => 'Connecting to live updates…',
    live: () => 'Live',
    paused: () => missed > 0 ? 'Paused: ' + missed + ' new since' : 'Paused',
    reconnecting: () => 'Reconnecting… (the page does not change until it is back)',
    stopped: () => 'Live updates stopped: ' + stream.why,
  };

  function show() {
    const state = stream.state === 'stopped' ? 'stopped' : paused ? 'paused' : stream.state;
    body.setAttribute('data-live-state', state);
    label.textContent = TEXT[state]();
    label.hidden = false;
    button.hidden = state !== 'live' && state !== 'paused';
    button.textContent = paused ? (missed > 0 ? 'Resume live updates (' + missed + ' new)' : 'Resume live updates') : 'Pause live updates';
    button.setAttribute('aria-pressed', String(paused));
  }

  function focusedIn(region) {
    const active = document.activeElement;
    if (region.querySelector('input[type=checkbox]:checked')) return true; // a selection being made (rows to replay) is kept
    return active && active !== body && region.contains(active) && active.matches('input:not([type=checkbox]), select, textarea');
  }

  const loggedOut = (response) => response.redirected && new URL(response.url).pathname === root + 'login';

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    last = Date.now();
    try {
      const response = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'text/html' } });
      if (loggedOut(response)) { stop('you are logged out. Log in again to see new events.'); return; }
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
    if (stream.state === 'stopped') return;
    if (paused) { missed++; show(); return; }
    if (timer) return;
    timer = setTimeout(() => { timer = 0; refresh(); }, Math.max(0, MIN_GAP_MS - (Date.now() - last)));
  }

  // The stream's state changed here (the leader's stream, or this tab's refresh): show it, and tell the other tabs.
  function publish(next) {
    stream = next;
    show();
    if (channel && leading) channel.postMessage({ kind: 'state', stream, seen });
  }

  function stop(why) {
    if (source) source.close();
    source = null;
    publish({ state: 'stopped', why });
  }

  // EventSource gives up on an answer that is not a stream without saying why: ask the route once, and let go at once.
  async function explain() {
    const abort = new AbortController();
    let why = 'the server did not open the stream. Reload the page to try again.';
    try {
      const response = await fetch(root + 'stream', { credentials: 'same-origin', cache: 'no-store', signal: abort.signal });
      if (loggedOut(response)) why = 'you are logged out. Log in again to see new events.';
      else if (response.ok) { abort.abort(); publish({ state: 'reconnecting', why: '' }); setTimeout(open, RETRY_MS); return; }
      else {
        const page = new DOMParser().parseFromString(await response.text(), 'text/html');
        const said = page.querySelector('.error');
        why = (said && said.textContent.trim()) || 'the server answered ' + response.status + '. Reload the page to try again.';
      }
    } catch (e) {
      why = 'hookrun cannot be reached. Reload the page when it is back.';
    }
    abort.abort();
    stop(why);
  }

  function open() {
    if (stream.state === 'stopped') return;
    const mine = new EventSource(root + 'stream' + (seen ? '?lastEventId=' + encodeURIComponent(seen) : ''));
    source = mine;
    mine.addEventListener('ready', (e) => {
      try { seen = seen || String(JSON.parse(e.data).after); } catch (error) { /* no position: start from now */ }
      publish({ state: 'live', why: '' });
    });
    mine.addEventListener('event', (e) => {
      seen = e.lastEventId || seen;
      schedule();
      if (channel) channel.postMessage({ kind: 'event', seen });
    });
    mine.addEventListener('error', () => {
      if (source !== mine) return;
      if (mine.readyState === EventSource.CLOSED) { source = null; explain(); return; }
      publish({ state: 'reconnecting', why: '' });
    });
  }

  function lead() {
    leading = true;
    open();
  }

  button.addEventListener('click', () => {
    paused = !paused;
    try { localStorage.setItem(KEY, paused ? 'paused' : 'on'); } catch (e) { /* kept for this page only */ }
    if (!paused && missed > 0) { missed = 0; schedule(); }
    show();
  });

  if (channel) {
    channel.onmessage = (message) => {
      const data = message.data || {};
      if (data.seen) seen = data.seen;
      if (data.kind === 'event') schedule();
      else if (data.kind === 'state' && !leading && data.stream) { stream = data.stream; show(); }
      else if (data.kind === 'hello' && leading) channel.postMessage({ kind: 'state', stream, seen });
    };
  }
  // The leader leaving: its stream ends now, and the others show it is being taken over until the next leader says live.
  addEventListener('pagehide', () => {
    if (!leading) return;
    if (source) source.close();
    source = null;
    if (channel && stream.state !== 'stopped') channel.postMessage({ kind: 'state', stream: { state: 'reconnecting', why: '' }, seen });
  });

  // Back from the back-forward cache: its stream and its place among the tabs are gone, so load afresh.
  addEventListener('pageshow', (e) => { if (e.persisted) location.reload(); });

  show();
  if (channel && navigator.locks && typeof navigator.locks.request === 'function') {
    // Held for as long as this tab lives: the browser hands it to a waiting tab when this one closes.
    navigator.locks.request(SHARED, () => new Promise(() => lead())).catch(lead);
    channel.postMessage({ kind: 'hello' });
  } else {
    lead();
  }
})();
`;
