import type { MiddlewareHandler } from 'hono';
import { html } from '../html.js';

/** Where the frame (layout.ts) shows who is signed in; filled per request by `showSignedIn`, since a page is drawn without its session. */
export const SIGNED_IN_MARK = '<span class="signed-in" id="signed-in"></span>';

/**
 * Every signed-in page says who is signed in and with which role, and
 * carries the role on `<html data-role>`: for a viewer the console's style
 * hides every form that posts an action (the server refuses them anyway), so
 * a button added later is hidden from viewers without being told to.
 */
export function showSignedIn(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const signedIn = c.get('signedIn');
    if (!signedIn || !(c.res.headers.get('content-type') ?? '').startsWith('text/html') || c.res.body === null) return;
    const text = await c.res.text();
    const who = html`<span class="signed-in" id="signed-in" data-role="${signedIn.role}">${signedIn.name} · ${signedIn.role}</span>`.toString();
    const body = text.replace(SIGNED_IN_MARK, () => who).replace(/<html(?=[\s>])/, () => `<html data-role="${signedIn.role}"`);
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    const { status } = c.res;
    c.res = undefined; // replaced whole, as mount-path.ts does
    c.res = new Response(body, { status, headers });
  };
}
