/**
 * The tests' one way to wait: call `probe` until it returns a value (not
 * undefined) or `timeoutMs` passes, then fail naming `what`; never a bare
 * sleep. `intervalMs` between probes (default 50; in-process checks use less).
 */
export async function pollUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
