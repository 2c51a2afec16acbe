/**
 * The bytes of request bodies read or held at once, across all receivers
 * and body-reading routes of one process. Bytes are taken as they arrive
 * (never on a declared `Content-Length`), so a socket that declares a large
 * body and sends nothing holds nothing; and one client address holds at most
 * `perAddressBytes` of it, so one client cannot starve the others. Past
 * either cap a request is answered 503 at once (a provider retries) instead
 * of being buffered.
 */
export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();

  /**
   * `perAddressBytes` is raised to `minPerAddressBytes` (one whole body of the
   * largest allowed size must always fit) and capped at `maxBytes`.
   */
  constructor(
    readonly maxBytes: number,
    perAddressBytes: number = maxBytes,
    minPerAddressBytes: number = 0,
  ) {
    this.perAddressBytes = Math.min(maxBytes, Math.max(perAddressBytes, minPerAddressBytes));
  }

  /** What one client address may hold at once. */
  readonly perAddressBytes: number;

  /**
   * Take `bytes` for the client at `address` (its key from `addressKey`;
   * undefined when there is no socket, e.g. in-process requests: only the
   * whole cap applies). Returns why it does not fit, or undefined when taken.
   */
  tryReserve(address: string | undefined, bytes: number): 'total' | 'address' | undefined {
    if (this.used + bytes > this.maxBytes) return 'total';
    if (address !== undefined) {
      const held = this.byAddress.get(address) ?? 0;
      if (held + bytes > this.perAddressBytes) return 'address';
      this.byAddress.set(address, held + bytes);
    }
    this.used += bytes;
    return undefined;
  }

  /** Give back what a request took, when it is answered. */
  release(address: string | undefined, bytes: number): void {
    if (bytes <= 0) return;
    this.used = Math.max(0, this.used - bytes);
    if (address === undefined) return;
    const left = (this.byAddress.get(address) ?? 0) - bytes;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }

  /** Bytes taken now (metrics, tests). */
  get inUse(): number {
    return this.used;
  }

  /** Bytes one address holds now (tests). */
  heldBy(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }
}

/**
 * The budget's key for a client address: IPv4 as is (IPv4-mapped IPv6 made
 * plain), IPv6 by its /64, which one subscriber usually holds whole.
 */
export function addressKey(address: string | undefined): string | undefined {
  if (!address) return undefined;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice('::ffff:'.length);
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
