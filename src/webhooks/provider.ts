import type { Verifier } from './delivery.js';

/** A configured signing secret list, with the env name it came from (for messages, never the value). */
export interface SecretSetting {
  envName: string;
  /** One or more secrets: a comma-separated value is a rotation list, any may match. */
  values: string[];
}

/** A request header a provider sends, as the OpenAPI document lists it. */
export interface HeaderDoc {
  name: string;
  description: string;
  required?: boolean;
}

/** When and how `hookrun send` signs: the provider's own scheme over the exact body. */
export interface SignInput {
  body: string;
  /** The active (first) secret of the receiver's setting. */
  secret: string;
  nowMs: number;
  /** A fresh message id for schemes that sign one (Svix, Standard Webhooks). */
  messageId: string;
  /** Where the request goes (Twilio signs the URL). */
  url: string;
  /** The event's hookrun type (GitHub and Shopify send it in a header). */
  type: string;
}

/** What one receiver knows beyond its secret (Twilio signs the public URL). */
export interface VerifierContext {
  /** `PUBLIC_URL`: the origin the sender posts to, when it is not what this process sees. */
  publicUrl: URL | undefined;
}

/**
 * Everything hookrun knows about one sender, in one place: its route, how it
 * signs and how its deliveries are verified, keyed and typed, what credential
 * headers it always sends (so a request without them is refused before its
 * body is read), realistic samples for `hookrun send`, and its OpenAPI entry.
 * Adding a sender is its file (`defineProvider({...})`) and one line in the
 * list of `providers/index.ts`; a definition missing a required part does not compile.
 */
export interface ProviderDefinition<Route extends string = string, Name extends string = string> {
  /** The sender's name in messages and docs (`Stripe`, `GitHub`). */
  title: string;
  /** Its route `/webhooks/<route>` (the `source` of its events): a built-in one, or a platform.json `webhooks` route. */
  route: Route;
  /** Its name among the providers of its route: what `<ROUTE>_PROVIDER` picks (`PAYMENTS_PROVIDER=paddle`). */
  name: Name;
  /** Its own secret env names, first found wins; a route several providers serve reads `<ROUTE>_WEBHOOK_SECRET` before them. */
  secretEnv: readonly string[];
  /** `json` (most) or `form` (`application/x-www-form-urlencoded`, Twilio). */
  body: 'json' | 'form';
  /** Lower-case names; a delivery with none of them is refused unread. */
  credentialHeaders: readonly string[];
  /** The answer to a delivery with none of the credential headers. */
  missingCredentials: { code: 'missing_signature' | 'unauthorized'; message: string };
  /** The secrets in a setting, when the provider's own format is not a plain comma-separated list (Supabase: `v1,whsec_…|v1,whsec_…`). */
  secrets?(values: readonly string[]): string[];
  /** Build the verifier from the configured secret(s); a malformed secret throws ConfigError. */
  createVerifier(setting: SecretSetting, context: VerifierContext): Verifier;
  /** Event types `hookrun send` has a full sample of; a sender that is only received (a platform.json one) has none, and `send --data` fills its envelope. */
  sampleTypes?: readonly string[];
  /** How a typed type is spelled by the provider (Supabase upper-cases change types). */
  normalizeType?(type: string): string;
  /** A realistic event of one of `sampleTypes`, with fresh ids (absent with them). */
  buildSample?(type: string, nowMs: number): Record<string, unknown>;
  /** The bare event of a type without a sample (`send --data` fills it). */
  envelope(type: string, nowMs: number): Record<string, unknown>;
  /** The headers (with the content type) the provider sends with `body`. */
  sign(input: SignInput): Record<string, string>;
  /** The body `hookrun send` posts for an event (JSON, or a form for Twilio). */
  encode?(event: Record<string, unknown>): string;
  openapi: { summary: string; description: string; headers: HeaderDoc[] };
}

/** Declare a provider, keeping its route and name as literal types (the list derives routes and choices from them). */
export function defineProvider<Route extends string, Name extends string>(definition: ProviderDefinition<Route, Name>): ProviderDefinition<Route, Name> {
  return definition;
}
