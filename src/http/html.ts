import { html as honoHtml, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** Markup that is already safe (built by `html`, or `trusted` text of our own); anything else interpolated is escaped. */
export type SafeHtml = HtmlEscapedString;

/** Our own markup (a style sheet), passed through unescaped: never for text that came from outside. */
export function trusted(markup: string): SafeHtml {
  return raw(markup);
}

/** What hono's `html` would print differently from what the pages expect: a Date as ISO time, `true` as text. */
function shown(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value === true) return 'true';
  return Array.isArray(value) ? value.map(shown) : value;
}

/**
 * hono's `html` tag: escapes every interpolation (& < > " ') unless it is
 * itself `html` output, so the dashboard cannot forget to escape a payload, a
 * type or an error message (all of them come from outside). Arrays are joined;
 * null, undefined and false print nothing. Nothing here interpolates a
 * promise, so the result is always synchronous.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  const out = honoHtml(strings, ...values.map(shown));
  if (out instanceof Promise) throw new TypeError('html: a promise was interpolated; await it first');
  return out;
}
