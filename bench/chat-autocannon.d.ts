// autocannon ships no types; the subset bench/chat.ts and bench/capacity.ts use.
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
    /**
     * The request sequence each connection repeats: `setupRequest` returns the request to send,
     * `onResponse` sees its answer. `context` is the connection's own, reset when its sequence starts over.
     */
    requests?: {
      setupRequest?: (req: { method?: string; path?: string; headers: Record<string, string>; body?: string | Buffer }, context: Record<string, unknown>) => unknown;
      onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
    }[];
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
