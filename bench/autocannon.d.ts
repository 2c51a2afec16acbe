// Minimal types for the parts of autocannon's programmatic API the bench uses (the package ships none).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    requests?: Request[];
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    latency: { p50: number; p99: number; max: number; average: number };
    requests: { total: number; average: number };
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
