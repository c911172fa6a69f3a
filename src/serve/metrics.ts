/**
 * `/metrics` in the Prometheus text format (0.0.4) with vLLM's metric names and labels, so dashboards,
 * autoscalers and `blis observe --scrape-kv-metrics` written for vLLM read a `blis serve` process unchanged.
 * Latency histograms hold the simulated values (seconds).
 */
import type { LiveStats } from './live-engine.js';

const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

/** Python's float repr for the values the exporter prints (`1.0`, `0.25`, `+Inf`). */
export function promNumber(x: number): string {
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (Number.isNaN(x)) return 'NaN';
  return Number.isInteger(x) ? x.toFixed(1) : String(x);
}

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private n = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(v: number): void {
    this.sum += v;
    this.n++;
    for (let i = 0; i < this.bounds.length; i++) if (v <= (this.bounds[i] as number)) this.counts[i] = (this.counts[i] as number) + 1;
  }

  lines(name: string, labels: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.bounds.length; i++) out.push(`${name}_bucket{${labels},le="${promNumber(this.bounds[i] as number)}"} ${promNumber(this.counts[i] as number)}`);
    out.push(`${name}_bucket{${labels},le="+Inf"} ${promNumber(this.n)}`);
    out.push(`${name}_count{${labels}} ${promNumber(this.n)}`);
    out.push(`${name}_sum{${labels}} ${promNumber(this.sum)}`);
    return out;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** Counters and histograms the HTTP layer feeds; gauges are read from the engine at scrape time. */
export class ServeMetrics {
  readonly ttft = new Histogram(TTFT_BUCKETS);
  readonly itl = new Histogram(ITL_BUCKETS);
  readonly e2e = new Histogram(E2E_BUCKETS);
  promptTokens = 0;
  generationTokens = 0;
  /** Finished requests by finish reason. */
  readonly success = new Map<string, number>([['length', 0], ['abort', 0]]);
  /** Requests answered with an HTTP error (validation) or failed by the engine. */
  failed = 0;

  constructor(private readonly modelName: string) {}

  finished(reason: string): void {
    this.success.set(reason, (this.success.get(reason) ?? 0) + 1);
  }

  render(s: LiveStats): string {
    const labels = `engine="0",model_name="${escapeLabel(this.modelName)}"`;
    const out: string[] = [];
    const family = (name: string, type: string, help: string, samples: string[]): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples);
    };
    const one = (name: string, type: string, help: string, v: number): void => family(name, type, help, [`${name}{${labels}} ${promNumber(v)}`]);
    one('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', s.running);
    one('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', s.waiting);
    one('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', s.kvUsage);
    one('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage (older name).', s.kvUsage);
    one('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', s.preemptions);
    if (s.cacheQueryBlocks !== null && s.cacheHitBlocks !== null) {
      one('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', s.cacheQueryBlocks * s.blockSize);
      one('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', s.cacheHitBlocks * s.blockSize);
    }
    one('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', this.promptTokens);
    one('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', this.generationTokens);
    family(
      'vllm:request_success_total',
      'counter',
      'Count of successfully processed requests.',
      [...this.success].map(([reason, v]) => `vllm:request_success_total{${labels},finished_reason="${escapeLabel(reason)}"} ${promNumber(v)}`),
    );
    one('blis:deliveries_total', 'counter', 'Chunks and responses released to clients (blis serve).', s.deliveries);
    one('blis:delivery_lag_seconds_total', 'counter', 'Total lateness of those releases against their simulated times.', s.lagSumUs / 1e6);
    one('blis:delivery_lag_max_seconds', 'gauge', 'Worst lateness of a release against its simulated time so far.', s.lagMaxUs / 1e6);
    one('blis:request_failures_total', 'counter', 'Requests rejected by validation or dropped by the simulated engine.', this.failed);
    family('vllm:time_to_first_token_seconds', 'histogram', 'Histogram of time to first token in seconds.', this.ttft.lines('vllm:time_to_first_token_seconds', labels));
    family('vllm:inter_token_latency_seconds', 'histogram', 'Histogram of inter-token latency in seconds.', this.itl.lines('vllm:inter_token_latency_seconds', labels));
    family('vllm:time_per_output_token_seconds', 'histogram', 'Histogram of time per output token in seconds (older name of the inter-token latency).', this.itl.lines('vllm:time_per_output_token_seconds', labels));
    family('vllm:e2e_request_latency_seconds', 'histogram', 'Histogram of end to end request latency in seconds.', this.e2e.lines('vllm:e2e_request_latency_seconds', labels));
    return `${out.join('\n')}\n`;
  }
}
