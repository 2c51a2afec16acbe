/**
 * The value at a dotted path of a JSON text, read from the text itself and
 * not from `JSON.parse`, whose numbers are doubles: `9007199254740993` would
 * come back as `…992`, and `1.0` as `1`. A string comes back decoded, a
 * number as its literal text. Runs only on text `JSON.parse` has accepted,
 * so it checks no grammar; like `JSON.parse` (and jsonb), the last of
 * repeated names wins.
 */

/** What sits at the path: a decoded string or a number's literal text; `other` for anything else. */
export type RawJsonValue = { kind: 'string'; value: string } | { kind: 'number'; text: string } | { kind: 'other' };

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

class Scanner {
  i = 0;
  constructor(readonly text: string) {}

  skipSpace(): void {
    while (this.i < this.text.length && isSpace(this.text.charCodeAt(this.i))) this.i++;
  }

  /** The raw text of a string token starting at `i` (quotes included); `i` moves past it. */
  stringToken(): string {
    const start = this.i++;
    while (this.i < this.text.length) {
      const c = this.text.charCodeAt(this.i++);
      if (c === 92 /* \ */) this.i++;
      else if (c === 34 /* " */) break;
    }
    return this.text.slice(start, this.i);
  }

  /** Move past one value (any kind), returning where it started and ended. */
  skipValue(): [number, number] {
    this.skipSpace();
    const start = this.i;
    const c = this.text.charCodeAt(this.i);
    if (c === 34) this.stringToken();
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      let depth = 0;
      while (this.i < this.text.length) {
        const d = this.text.charCodeAt(this.i);
        if (d === 34) {
          this.stringToken();
          continue;
        }
        this.i++;
        if (d === 123 || d === 91) depth++;
        else if ((d === 125 || d === 93) && --depth === 0) break;
      }
    } else {
      while (this.i < this.text.length && !/[\s,}\]]/.test(this.text[this.i]!)) this.i++;
    }
    return [start, this.i];
  }

  /** In the object starting at `i`: the span of the last member named `name`, or undefined. */
  member(name: string): [number, number] | undefined {
    this.skipSpace();
    if (this.text.charCodeAt(this.i) !== 123) return undefined;
    this.i++;
    let found: [number, number] | undefined;
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== 34) return found; // `}`: the object ends
      const key = JSON.parse(this.stringToken()) as string;
      this.skipSpace();
      this.i++; // `:`
      const span = this.skipValue();
      if (key === name) found = span;
      this.skipSpace();
      if (this.text.charCodeAt(this.i) === 44 /* , */) this.i++;
    }
  }
}

/** The value at `path` (`event.id`) of a JSON text that `JSON.parse` accepted; undefined when the path is absent. */
export function readRawJsonPath(text: string, path: string): RawJsonValue | undefined {
  const scanner = new Scanner(text);
  let span: [number, number] | undefined;
  for (const part of path.split('.')) {
    span = scanner.member(part);
    if (!span) return undefined;
    scanner.i = span[0];
  }
  if (!span) return undefined;
  const raw = text.slice(span[0], span[1]);
  const first = raw.charCodeAt(0);
  if (first === 34) return { kind: 'string', value: JSON.parse(raw) as string };
  if (first === 45 /* - */ || (first >= 48 && first <= 57)) return { kind: 'number', text: raw };
  return { kind: 'other' };
}

const NUMBER_LITERAL = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * An id as an idempotency key, one key per distinct JSON id: a string is
 * itself, a number its literal text (`1` and `1.0` are two keys); a string
 * that reads as a number, or starts with `"`, keeps its JSON quotes (`"1"`),
 * so no string meets a number.
 */
export function idempotencyKeyOf(value: RawJsonValue): string | undefined {
  if (value.kind === 'number') return value.text;
  if (value.kind !== 'string') return undefined;
  return NUMBER_LITERAL.test(value.value) || value.value.startsWith('"') ? JSON.stringify(value.value) : value.value;
}
