import { html, type SafeHtml } from './html.js';
import type { Json } from './openapi-parts.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Json;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Json }> };
  responses?: Record<string, { description?: string }>;
}

/** `{"type":"integer","minimum":1,"maximum":200,"default":50}` as people read it: `integer 1–200, default 50`. */
function describeSchema(schema: Json | undefined): string {
  if (!schema) return '';
  const parts = [String(schema.type ?? '')];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.join(', ')}`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push(`${schema.minimum ?? ''}–${schema.maximum ?? ''}`);
  if (schema.maxLength !== undefined) parts.push(`${schema.minLength ?? 0}–${schema.maxLength} chars`);
  if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.filter(Boolean).join(', ');
}

function operationHtml(path: string, method: string, op: Operation): SafeHtml {
  const params = op.parameters ?? [];
  const body = op.requestBody?.content?.['application/json']?.schema;
  return html`<section id="${`${method}-${path}`}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
<p>${op.summary ?? ''}</p>${op.description ? html`<p class="d">${op.description}</p>` : ''}
${params.length > 0 ? html`<table><tr><th>parameter</th><th>in</th><th>schema</th><th>meaning</th></tr>${params.map((p) => html`<tr><td><code>${p.name}</code>${p.required ? ' *' : ''}</td><td>${p.in}</td><td>${describeSchema(p.schema)}</td><td>${p.description ?? ''}</td></tr>`)}</table>` : ''}
${body ? html`<p>Body (JSON):</p><pre>${JSON.stringify(body, null, 2)}</pre>` : ''}
<ul>${Object.entries(op.responses ?? {}).map(([status, r]) => html`<li><b>${status}</b> ${r.description ?? ''}</li>`)}</ul>
</section>`;
}

/**
 * `GET /docs`: the OpenAPI document as one readable page, rendered on the
 * server from the same object `/openapi.json` serves. No script, no CDN, no
 * external asset: it works offline and under a CSP that allows nothing else.
 */
export function renderDocsPage(document: Json): string {
  const info = document.info as { title?: string; version?: string } | undefined;
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const operations = Object.entries(paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
  const byTag = new Map<string, typeof operations>();
  for (const o of operations) {
    const tag = o.op.tags?.[0] ?? 'other';
    byTag.set(tag, [...(byTag.get(tag) ?? []), o]);
  }
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${info?.title ?? 'hookrun'} API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.5rem;overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:14px}td,th{border-bottom:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}.m{font-weight:700;padding:0 .3rem;border-radius:3px;color:#fff;background:#555}
.get{background:#2b6cb0}.post{background:#2f855a}.d{color:#444}section{border-top:1px solid #eee;padding:.5rem 0}nav a{margin-right:1rem}</style></head><body>
<h1>${info?.title ?? 'hookrun'} API <small>${info?.version ?? ''}</small></h1>
<p>The machine-readable document is <a href="/openapi.json">/openapi.json</a>. Every error is <code>{"error":{"code","message"}}</code>.</p>
<nav>${[...byTag.keys()].map((tag) => html`<a href="#${tag}">${tag}</a>`)}</nav>
${[...byTag].map(([tag, ops]) => html`<h2 id="${tag}">${tag}</h2>${ops.map((o) => operationHtml(o.path, o.method, o.op))}`)}
</body></html>`.toString();
}
