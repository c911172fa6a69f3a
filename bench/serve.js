// `node bench/serve.js [--streams 500] [--tokens 100] [--prompt 200]`: starts `blis serve` (built CLI, child
// process, loopback only), opens N concurrent streaming completions at once, and checks that every stream
// delivers all its tokens, the usage chunk and [DONE]. Prints counts and client-side timings (ms); exits 1 if
// any stream was dropped or incomplete. Build first (npm run build).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const STREAMS = arg('streams', 500);
const TOKENS = arg('tokens', 100);
const PROMPT = arg('prompt', 200);
const MODEL = 'meta-llama/llama-3.1-8b-instruct';

function startServe() {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'blis.js'), 'serve', '--model', MODEL, '--hardware', 'H100', '--tp', '1', '--port', '0', '--log', 'error'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('blis serve did not start in 30 s')), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.once('exit', (code) => reject(new Error(`blis serve exited with ${code}`)));
  });
}

async function stream(url, i, t0) {
  const words = Array.from({ length: PROMPT }, (_, k) => `w${(i * 31 + k) % 997}`).join(' ');
  const r = { ok: false, chunks: 0, ttft: 0, e2e: 0, error: '' };
  // Latencies are from this request's send; the spread of sends (opening N connections) is reported apart.
  const sent = performance.now();
  r.sent = sent - t0;
  try {
    const res = await fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: words, max_tokens: TOKENS, min_tokens: TOKENS, stream: true, stream_options: { include_usage: true } }),
      signal: AbortSignal.timeout(300_000),
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    const dec = new TextDecoder();
    let buf = '';
    let done = false;
    let usage = null;
    for await (const part of res.body) {
      const now = performance.now() - sent;
      buf += dec.decode(part, { stream: true });
      let j;
      while ((j = buf.indexOf('\n\n')) >= 0) {
        const data = buf.slice(6, j);
        buf = buf.slice(j + 2);
        if (data === '[DONE]') done = true;
        else {
          const o = JSON.parse(data);
          if (o.usage) usage = o.usage;
          if (o.choices.length > 0) {
            if (r.chunks === 0) r.ttft = now;
            r.chunks++;
          }
          r.e2e = now;
        }
      }
    }
    r.ok = done && r.chunks === TOKENS && usage?.completion_tokens === TOKENS && usage?.prompt_tokens === PROMPT;
    if (!r.ok) r.error = `incomplete: ${r.chunks} token chunks, done=${done}`;
  } catch (e) {
    r.error = String(e?.message ?? e);
  }
  return r;
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const { url, child } = await startServe();
try {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: STREAMS }, (_, i) => stream(url, i, t0)));
  const wall = performance.now() - t0;
  const ok = results.filter((r) => r.ok);
  const failed = results.filter((r) => !r.ok);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const success = /vllm:request_success_total\{[^}]*finished_reason="length"\} (\S+)/.exec(metrics)?.[1];
  const sample = (name) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  const simTtft = (sample('vllm:time_to_first_token_seconds_sum') / sample('vllm:time_to_first_token_seconds_count')) * 1000;
  const simE2e = (sample('vllm:e2e_request_latency_seconds_sum') / sample('vllm:e2e_request_latency_seconds_count')) * 1000;
  const mean = (v) => v.reduce((a, x) => a + x, 0) / Math.max(1, v.length);
  const row = (name, v) => `${name.padEnd(8)} p50 ${pct(v, 50).toFixed(1).padStart(8)}  p99 ${pct(v, 99).toFixed(1).padStart(8)}  max ${Math.max(0, ...v).toFixed(1).padStart(8)}`;
  console.log(`blis serve: ${STREAMS} concurrent streams x ${TOKENS} tokens (prompt ${PROMPT} words), llama-3.1-8b H100 TP1`);
  console.log(`completed ${ok.length}/${STREAMS}, failed ${failed.length}; server request_success_total ${success}; wall ${(wall / 1000).toFixed(2)} s`);
  console.log(`sends spread over ${Math.max(...results.map((r) => r.sent)).toFixed(1)} ms`);
  console.log(row('ttft ms', ok.map((r) => r.ttft)));
  console.log(row('e2e ms', ok.map((r) => r.e2e)));
  // The simulated latencies (server histograms) against what the clients saw: the gap is the pacing lag.
  console.log(`mean ttft: client ${mean(ok.map((r) => r.ttft)).toFixed(1)} ms, simulated ${simTtft.toFixed(1)} ms; mean e2e: client ${mean(ok.map((r) => r.e2e)).toFixed(1)} ms, simulated ${simE2e.toFixed(1)} ms`);
  const lagMean = (sample('blis:delivery_lag_seconds_total') / sample('blis:deliveries_total')) * 1000;
  console.log(`server delivery lag behind the simulated clock: mean ${lagMean.toFixed(2)} ms, max ${(sample('blis:delivery_lag_max_seconds') * 1000).toFixed(2)} ms`);
  console.log(`token chunks received ${results.reduce((a, r) => a + r.chunks, 0)} (expected ${STREAMS * TOKENS}), ${((results.reduce((a, r) => a + r.chunks, 0) / wall) * 1000).toFixed(0)} tokens/s`);
  for (const f of failed.slice(0, 5)) console.log(`  failure: ${f.error}`);
  process.exitCode = failed.length === 0 ? 0 : 1;
} finally {
  child.kill('SIGTERM');
}
