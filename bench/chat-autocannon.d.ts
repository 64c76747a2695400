// autocannon ships no types; the subset bench/chat.ts uses.
declare module "autocannon" {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    /** Per-request hook: returns the request to send (autocannon's `requests[].setupRequest`). */
    requests?: { setupRequest?: (req: { method?: string; path?: string; headers: Record<string, string>; body?: string | Buffer }) => unknown }[];
  }
  interface Histogram {
    average: number;
    total: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
