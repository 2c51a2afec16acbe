/** One zod issue, as much of it as the repair reads (zod 4's `$ZodIssue`). */
interface Issue {
  code: string;
  path: PropertyKey[];
  expected?: string;
  format?: string;
  values?: unknown[];
  errors?: Issue[][];
}

/** A schema that reports issues: a zod 4 (or zod/v4-mini) schema such as Polar's `Webhook…Payload$inboundSchema`. */
export interface ParsingSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: readonly unknown[] } };
}

const AT = '2025-06-01T12:00:00.000000Z';
const FORMATS: Record<string, string> = {
  datetime: AT,
  date: '2025-06-01',
  email: 'customer@example.com',
  uuid: '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f',
  url: 'https://example.com/',
};
const TYPES: Record<string, unknown> = { string: 'example', number: 1, int: 1, boolean: false, object: {}, record: {}, array: [], null: null, date: AT };

function setAt(root: Record<PropertyKey, unknown>, path: PropertyKey[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PropertyKey, unknown>;
  node[path.at(-1)!] = value;
}

/** Fill what each issue names; a union is answered with its first option. False when an issue says nothing to fill. */
function repair(root: Record<PropertyKey, unknown>, issues: Issue[], base: PropertyKey[]): boolean {
  return issues.every((issue) => {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union') return issue.errors?.[0]?.length ? repair(root, issue.errors[0], path) : false;
    let value: unknown;
    if (issue.code === 'invalid_value') value = issue.values?.[0];
    else if (issue.code === 'invalid_format') value = FORMATS[issue.format ?? ''];
    else if (issue.code === 'invalid_type') value = TYPES[issue.expected ?? ''];
    if (value === undefined || path.length < 2) return false;
    setAt(root, path, structuredClone(value));
    return true;
  });
}

/**
 * The smallest body a published schema accepts, grown from `seed`: parse,
 * fill every required field the issues name (first union option, first enum
 * value, a value of the expected type or format), parse again, until it
 * passes. Optional fields stay out. Throws when the schema asks for what no
 * issue describes, so a package bump that needs more fails loudly.
 */
export function exampleFromSchema(schema: ParsingSchema, seed: Record<string, unknown>, label: string): Record<string, unknown> {
  const root = { body: structuredClone(seed) };
  for (let round = 0; round < 100; round++) {
    const result = schema.safeParse(root.body);
    if (result.success) return root.body;
    const issues = (result.error?.issues ?? []) as Issue[];
    if (!repair(root, issues, ['body'])) throw new Error(`${label}: cannot fill ${JSON.stringify(issues).slice(0, 500)}`);
  }
  throw new Error(`${label}: no accepted body after 100 rounds`);
}
