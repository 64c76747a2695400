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
     * One connection's cycle of requests (autocannon's `requests`): `setupRequest` returns the
     * request to send (null: start the cycle over), `onResponse` sees each answer; `context` is
     * the connection's own, reset when the cycle starts over.
     */
    requests?: {
      setupRequest?: (req: { method?: string; path?: string; headers: Record<string, string>; body?: string | Buffer }, context: any) => unknown;
      onResponse?: (status: number, body: string, context: any, headers: Record<string, string | string[]>) => void;
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
    "2xx": number;
    /** Seconds the run lasted. */
    duration: number;
    errors: number;
    timeouts: number;
    /** Answers per HTTP status. */
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
