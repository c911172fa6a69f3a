/**
 * `blis evaluate --serve`: GEPA's HTTP evaluation-server protocol (GEPA 0.1.4, `gepa/oa/eval_server.py`) in
 * front of one evaluation suite, so an external search engine (GEPA's optimize_anything, an agent, a script)
 * evaluates candidates against a fixed budget without running the simulator itself.
 *
 * Endpoints (JSON in, JSON out; bound to 127.0.0.1 unless told otherwise):
 * - `POST /evaluate {candidate, example_id?, stage?}` → `{score, info, budget}`. Without `example_id` the
 *   candidate is evaluated on the whole suite: `stage` 2 (the default) is the cascade — stage 1, then the full
 *   suite when stage 1 passes — and costs one budget unit per example; `stage` 1 only the smoke stage, one unit
 *   per stage-1 run (an OpenEvolve cascade asks for stage 1, then stage 2). With `example_id`, on that one
 *   example (no `stage`).
 * - `POST /evaluate_examples {candidate, example_ids?}` → `{results: [{example_id, score, info}], average_score,
 *   scores, infos, num_evaluated, errors, budget}` (GEPA's keys plus the ordered `results`); each example is
 *   one evaluation and one budget unit; default: every example.
 * - `POST /validate {candidate}` → `{valid, error?}`: compiles / checks the candidate, no budget.
 * - `GET /status` → `{budget, suite, task, examples, best_score, total_evals, runs?}` (`runs`: scenario runs
 *   `simulated` and `remembered`, answered from the run memo).
 * - `GET /task` → the suite, its example ids, objectives and the candidate format (plus GEPA's `objective`,
 *   `background`, `has_dataset`, `train_size`, `val_size`, `test_size`).
 *
 * A candidate is a GEPA component dict `{name: text}` (`bundle` holding a whole policy bundle, or control-point
 * keys `admission|priority|routing|scheduler|autoscale` holding JavaScript), or — as GEPA's optimize_anything
 * sends — one string, taken as a bundle text. An example id is `scenario@seed` of the suite's stage 2 (the full
 * suite). `budget` is GEPA's BudgetTracker status (`used`, `max_evals`, `remaining_evals`, `exhausted`) plus
 * `total` and `remaining`.
 *
 * Status codes: a candidate that fails (syntax error, runtime error, ...) is a normal 200 with score 0 and
 * `info.error`; 400 malformed JSON, a bad candidate shape or an unknown example id; 404 unknown path; 405 wrong
 * method; 413 a body over 1 MiB; 429 when the budget cannot cover the request; 500 when the evaluator itself
 * throws (GEPA parity: that attempt still consumes its budget); 503 for requests still queued at close.
 *
 * POST requests are served one at a time in arrival order (queued), so a search sees the same results whatever
 * its client concurrency; GET requests answer immediately. Nothing a client sends can crash the server.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Candidate, EvaluationResult, Suite } from '../evaluate/types.js';

/** One example: a scenario of the suite and one of its seeds. */
export interface ExampleRef {
  readonly scenario: string;
  readonly seed: number;
}

export interface EvalServerOptions {
  readonly suite: Suite;
  /** Default 127.0.0.1 (loopback only). */
  readonly host?: string;
  /** 0 (the default) = an ephemeral port. */
  readonly port?: number;
  /** Maximum number of evaluations, counted per example evaluated. */
  readonly budget: number;
  /** Evaluates a candidate on the given examples (`null` = the whole suite, at `stage`: 2 when absent). */
  readonly evaluate: (candidate: Candidate, only: readonly ExampleRef[] | null, stage?: 1 | 2) => Promise<EvaluationResult>;
  /** Maps a component dict to a candidate; throws when the dict's shape is wrong (unknown key, ...). */
  readonly candidateFromComponents: (components: Record<string, string>, id: string) => Candidate;
  /**
   * Checks a candidate without simulating (e.g. a stage-1 evaluation or a compile). Absent: `/validate`
   * evaluates the candidate on the first example and reports its error, without charging the budget.
   */
  readonly validate?: (candidate: Candidate) => Promise<{ valid: boolean; error?: string }>;
  /** Scenario runs simulated and answered from memory so far (shown by `GET /status` as `runs`), when known. */
  readonly runStats?: () => { readonly simulated: number; readonly remembered: number };
  /** Largest accepted request body; default 1 MiB. */
  readonly maxBodyBytes?: number;
}

export interface EvaluationServer {
  /** `http://HOST:PORT` (IPv6 hosts bracketed). */
  readonly url: string;
  /** Stops accepting, answers 503 to queued requests, lets the running evaluation finish, frees the port. */
  close(): Promise<void>;
}

export const MAX_BODY_BYTES = 1024 * 1024;
/** Beyond this an oversized body is no longer drained: the connection is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
/** Each artifact text in `info` is cut to this many characters (reflection text, not a log). */
const MAX_ARTIFACT_CHARS = 32 * 1024;

const CONTROL_POINTS = ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode'] as const;

/** How a candidate is written, for `/task` (and so for an LLM proposing candidates). */
export const CANDIDATE_FORMAT = [
  'A candidate is a JSON object of components {name: text}. Either {"bundle": TEXT}: a whole blis policy bundle',
  '(YAML or JSON, docs/policies.md: top-level control-point keys admission, priority, routing, scheduler, autoscale, disaggregation, encode,',
  'each {type: parameterized | decision_tree | code, ...}); or control-point keys, each holding JavaScript source:',
  '"admission": function admit(request, state) -> "admit" | "reject" | {delayUs, reason?};',
  '"priority": function prioritize(request, state) -> a score (higher = more urgent);',
  '"routing": function route(request, state) -> an instance id, its index in state.instances, or {target, reason?};',
  '"scheduler": makeBatch(ctx) / selectPreemptionVictim(ctx) / onRequestArrival(request, ctx);',
  '"autoscale": function evaluate(ctx) -> {action: "up" | "down" | "none", by?} or {targetReplicas};',
  '"disaggregation" (P/D scenarios): function decide(request, state) -> true | false | {disaggregate, reason?};',
  '"encode" (E/P/D scenarios): function shouldEncode(request, state) -> true | false | {encode, reason?}.',
  'A plain string candidate is taken as a bundle text. Code runs in a deterministic sandbox (no I/O, no Date,',
  'no Math.random; randomness only via state.rng.intn(n) / state.rng.float()).',
].join(' ');

/** `scenario@seed`. */
export function exampleId(ref: ExampleRef): string {
  return `${ref.scenario}@${ref.seed}`;
}

/** The examples the server offers: the suite's stage-2 (full-suite) scenario × seed pairs, in suite order. */
export function suiteExamples(suite: Suite): ExampleRef[] {
  return suite.stage2.flatMap((s) => s.seeds.map((seed) => ({ scenario: s.name, seed })));
}

/** A deterministic candidate id from its components. */
export function candidateId(components: Readonly<Record<string, string>>): string {
  const canonical = JSON.stringify(Object.keys(components).sort().map((k) => [k, components[k]]));
  return `cand-${createHash('sha256').update(canonical).digest('hex').slice(0, 12)}`;
}

/** The result fields kept in `info` (per-scenario details keep their documented fields only). */
const SCENARIO_KEYS = ['scenario', 'seed', 'key', 'metrics', 'objectives', 'scores', 'score', 'anomalies'] as const;
const RESULT_KEYS = ['combined_score', 'combined_score_ci95', 'baseline', 'constraints', 'objectives', 'scores', 'features', 'candidate', 'suite', 'blis_version', 'error'] as const;

/**
 * `info` of a response: the evaluation result without bulky per-request data (documented fields only,
 * artifacts cut to 32 KiB each, other top-level keys kept only when scalar), plus `feedback`, the reflection
 * text (the summary, preceded by the error when the candidate failed and the summary does not quote it).
 */
export function slimResult(r: EvaluationResult): Record<string, unknown> {
  const src = r as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of RESULT_KEYS) if (src[k] !== undefined) out[k] = src[k];
  for (const [k, v] of Object.entries(src)) {
    if (!(k in out) && k !== 'scenarios' && k !== 'artifacts' && (v === null || ['string', 'number', 'boolean'].includes(typeof v))) out[k] = v;
  }
  out.scenarios = (Array.isArray(src.scenarios) ? (src.scenarios as unknown[]) : []).map((s) => {
    const rec = (s ?? {}) as Record<string, unknown>;
    const kept: Record<string, unknown> = {};
    for (const k of SCENARIO_KEYS) if (rec[k] !== undefined) kept[k] = rec[k];
    return kept;
  });
  const artifacts: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.artifacts ?? {})) {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    artifacts[k] = text.length > MAX_ARTIFACT_CHARS ? `${text.slice(0, MAX_ARTIFACT_CHARS)}\n[... ${text.length - MAX_ARTIFACT_CHARS} more characters]` : text;
  }
  out.artifacts = artifacts;
  const summary = artifacts.summary ?? '';
  const errorShown = r.error === undefined || (r.error.message !== '' && summary.includes(r.error.message));
  const parts = [errorShown ? '' : `The candidate failed: ${r.error.code}: ${r.error.message}`, summary];
  out.feedback = parts.filter((p) => p !== '').join('\n\n');
  return out;
}

/** A JSON answer. */
interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

class RequestError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const finiteScore = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const ROUTES: Readonly<Record<string, 'GET' | 'POST'>> = {
  '/evaluate': 'POST',
  '/evaluate_examples': 'POST',
  '/validate': 'POST',
  '/status': 'GET',
  '/task': 'GET',
};

/** Starts the server; resolves once it listens. */
export async function startEvaluationServer(o: EvalServerOptions): Promise<EvaluationServer> {
  const total = Math.max(0, Math.floor(o.budget));
  const maxBody = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const examples = suiteExamples(o.suite);
  const byId = new Map(examples.map((e) => [exampleId(e), e]));
  const stage1Runs = Math.max(1, o.suite.stage1.reduce((a, s) => a + s.seeds.length, 0));
  let used = 0;
  let bestScore: number | null = null;
  let closing = false;
  let tail: Promise<unknown> = Promise.resolve();

  const budget = (): Record<string, unknown> => {
    const remaining = Math.max(0, total - used);
    return { used, total, remaining, exhausted: used >= total, max_evals: total, remaining_evals: remaining };
  };

  /** Runs `fn` after every earlier queued request. */
  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(() => {
      if (closing) throw new RequestError(503, 'the evaluation server is closing');
      return fn();
    });
    tail = run.catch(() => undefined);
    return run;
  };

  const parseCandidate = (body: Record<string, unknown>): { components: Record<string, string>; candidate: Candidate } => {
    const raw = body.candidate;
    let components: Record<string, string>;
    if (typeof raw === 'string') components = { bundle: raw };
    else if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      components = {};
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') throw new RequestError(400, `candidate.${k} must be a string (component text), got ${v === null ? 'null' : typeof v}`);
        components[k] = v;
      }
      if (Object.keys(components).length === 0) throw new RequestError(400, `candidate is empty: give {"bundle": TEXT} or control-point keys (${CONTROL_POINTS.join(', ')})`);
    } else {
      throw new RequestError(400, `"candidate" must be an object {component: text} or a bundle text, got ${raw === undefined ? 'nothing' : raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`);
    }
    let candidate: Candidate;
    try {
      candidate = o.candidateFromComponents(components, candidateId(components));
    } catch (e) {
      throw new RequestError(400, `bad candidate: ${messageOf(e)}`);
    }
    return { components, candidate };
  };

  const lookup = (id: unknown, field: string): ExampleRef => {
    if (typeof id !== 'string') throw new RequestError(400, `${field} must be a string "scenario@seed", got ${id === null ? 'null' : typeof id}`);
    const ref = byId.get(id);
    if (!ref) throw new RequestError(400, `unknown example id "${id}" (known: ${[...byId.keys()].join(', ')})`);
    return ref;
  };

  const checkBudget = (needed: number): void => {
    const remaining = total - used;
    if (remaining <= 0) throw new RequestError(429, `evaluation budget exhausted: ${used}/${total} used`);
    if (remaining < needed) throw new RequestError(429, `not enough budget: ${remaining} remaining, ${needed} needed`);
  };

  /** One charged evaluation; an evaluator failure is charged too (GEPA parity) and rethrown. */
  const charged = async (candidate: Candidate, only: readonly ExampleRef[] | null, cost: number, stage?: 1 | 2): Promise<{ score: number; info: Record<string, unknown> }> => {
    let result: EvaluationResult;
    try {
      result = await o.evaluate(candidate, only, stage);
    } finally {
      used += cost;
    }
    const score = result.error ? 0 : finiteScore(result.combined_score);
    if (bestScore === null || score > bestScore) bestScore = score;
    const info = slimResult(result);
    info._budget = budget();
    return { score, info };
  };

  const postEvaluate = async (body: Record<string, unknown>): Promise<Reply> => {
    const { candidate } = parseCandidate(body);
    const id = body.example_id;
    const only = id === undefined || id === null ? null : [lookup(id, 'example_id')];
    const rawStage = body.stage;
    if (rawStage !== undefined && rawStage !== null && rawStage !== 1 && rawStage !== 2) throw new RequestError(400, `stage must be 1 (the smoke stage) or 2 (the cascade: stage 1, then the full suite), got ${JSON.stringify(rawStage)}`);
    const stage = rawStage === 1 || rawStage === 2 ? rawStage : undefined;
    if (stage !== undefined && only !== null) throw new RequestError(400, 'give either example_id (one example) or stage (the whole suite), not both');
    const cost = only ? 1 : stage === 1 ? stage1Runs : examples.length;
    checkBudget(cost);
    try {
      const { score, info } = await charged(candidate, only, cost, stage);
      return { status: 200, body: { score, info, budget: budget() } };
    } catch (e) {
      return { status: 500, body: { error: `the evaluator failed: ${messageOf(e)}`, budget: budget() } };
    }
  };

  const postEvaluateExamples = async (body: Record<string, unknown>): Promise<Reply> => {
    const { candidate } = parseCandidate(body);
    const ids = body.example_ids;
    let refs: ExampleRef[];
    if (ids === undefined || ids === null) refs = examples;
    else if (!Array.isArray(ids)) throw new RequestError(400, `example_ids must be an array of "scenario@seed" strings, got ${typeof ids}`);
    else if (ids.length === 0) throw new RequestError(400, 'example_ids is empty (omit it to evaluate every example)');
    else refs = ids.map((x, i) => lookup(x, `example_ids[${i}]`));
    checkBudget(refs.length);
    const results: { example_id: string; score: number; info: Record<string, unknown> }[] = [];
    const errors: Record<string, string> = {};
    for (const ref of refs) {
      const eid = exampleId(ref);
      try {
        const { score, info } = await charged(candidate, [ref], 1);
        results.push({ example_id: eid, score, info });
      } catch (e) {
        errors[eid] = `the evaluator failed: ${messageOf(e)}`;
        results.push({ example_id: eid, score: 0, info: { error: { code: 'EVALUATOR_ERROR', message: errors[eid] }, feedback: errors[eid] } });
      }
    }
    if (Object.keys(errors).length === refs.length) {
      return { status: 500, body: { error: Object.values(errors)[0], errors, budget: budget() } };
    }
    const scores: Record<string, number> = {};
    const infos: Record<string, unknown> = {};
    for (const r of results) {
      scores[r.example_id] = r.score;
      infos[r.example_id] = r.info;
    }
    const average = results.reduce((a, r) => a + r.score, 0) / results.length;
    return { status: 200, body: { results, average_score: average, scores, infos, num_evaluated: results.length, errors, budget: budget() } };
  };

  const postValidate = async (body: Record<string, unknown>): Promise<Reply> => {
    let candidate: Candidate;
    try {
      candidate = parseCandidate(body).candidate;
    } catch (e) {
      if (e instanceof RequestError && e.message.startsWith('bad candidate: ')) return { status: 200, body: { valid: false, error: e.message.slice('bad candidate: '.length) } };
      throw e;
    }
    try {
      if (o.validate) {
        const v = await o.validate(candidate);
        return { status: 200, body: v.valid ? { valid: true } : { valid: false, error: v.error ?? 'invalid candidate' } };
      }
      const first = examples[0];
      const result = await o.evaluate(candidate, first ? [first] : null);
      return { status: 200, body: result.error ? { valid: false, error: `${result.error.code}: ${result.error.message}` } : { valid: true } };
    } catch (e) {
      return { status: 500, body: { error: `the validator failed: ${messageOf(e)}` } };
    }
  };

  const getStatus = (): Reply => ({
    status: 200,
    body: { budget: budget(), suite: o.suite.name, task: o.suite.name, examples: examples.length, best_score: bestScore, total_evals: used, ...(o.runStats === undefined ? {} : { runs: o.runStats() }) },
  });

  const getTask = (): Reply => ({
    status: 200,
    body: {
      name: o.suite.name,
      suite: o.suite.name,
      description: o.suite.description,
      examples: examples.map(exampleId),
      objectives: o.suite.objectives.map((x) => ({ name: x.name, metric: x.metric, direction: x.direction, weight: x.weight, normalization: x.normalization })),
      candidate_format: CANDIDATE_FORMAT,
      stage1_threshold: o.suite.stage1Threshold,
      // GEPA optimize_anything's /task keys.
      objective: `Maximize combined_score in [0, 1] on the "${o.suite.name}" evaluation suite of the blis LLM-inference-cluster simulator.`,
      background: `${o.suite.description}\n\n${CANDIDATE_FORMAT}`,
      seed_candidate: null,
      has_dataset: true,
      train_size: examples.length,
      val_size: 0,
      test_size: 0,
    },
  });

  const post = (path: string, body: Record<string, unknown>): Promise<Reply> =>
    path === '/evaluate' ? postEvaluate(body) : path === '/evaluate_examples' ? postEvaluateExamples(body) : postValidate(body);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = ROUTES[path];
    if (method === undefined) return send(res, { status: 404, body: { error: `unknown path ${path} (POST /evaluate, /evaluate_examples, /validate; GET /status, /task)` } }, req);
    if (req.method !== method) return send(res, { status: 405, body: { error: `${path} takes ${method}, not ${req.method ?? '?'}` }, headers: { Allow: method } }, req);
    if (method === 'GET') return send(res, path === '/status' ? getStatus() : getTask(), req);
    const raw = await readBody(req, maxBody);
    if (raw === 'too-large') return send(res, { status: 413, body: { error: `request body over ${maxBody} bytes` } }, req, true);
    if (raw === 'aborted') return;
    let body: unknown;
    try {
      body = JSON.parse(raw.text.length === 0 ? '{}' : raw.text);
    } catch (e) {
      return send(res, { status: 400, body: { error: `malformed JSON: ${messageOf(e)}` } }, req);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return send(res, { status: 400, body: { error: 'the request body must be a JSON object' } }, req);
    let reply: Reply;
    try {
      reply = await enqueue(() => post(path, body as Record<string, unknown>));
    } catch (e) {
      if (e instanceof RequestError) {
        reply = { status: e.status, body: e.status === 429 || e.status === 503 ? { error: e.message, budget: budget() } : { error: e.message } };
      } else {
        reply = { status: 500, body: { error: `internal error: ${messageOf(e)}` } };
      }
    }
    send(res, reply, req);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      try {
        send(res, { status: 500, body: { error: `internal error: ${messageOf(e)}` } }, req);
      } catch {
        res.destroy();
      }
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":"bad request"}');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;

  let closed: Promise<void> | null = null;
  return {
    url,
    close(): Promise<void> {
      closed ??= (async () => {
        closing = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await tail;
        server.closeAllConnections();
        await stopped;
      })();
      return closed;
    },
  };
}

/** A body as text, or why there is none. */
type BodyRead = { readonly text: string } | 'too-large' | 'aborted';

/** Reads a request body as UTF-8, draining (and discarding) one that exceeds `limit`. */
function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES) {
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > limit;
    let done = false;
    const finish = (v: BodyRead): void => {
      if (done) return;
      done = true;
      resolve(v);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (over) {
        chunks.length = 0;
        if (size > DRAIN_LIMIT_BYTES) finish('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish(over ? 'too-large' : { text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', () => finish('aborted'));
    req.on('close', () => finish(over ? 'too-large' : 'aborted'));
  });
}

function send(res: ServerResponse, reply: Reply, req: IncomingMessage, closeAfter = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(reply.body);
  res.statusCode = reply.status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  // A request whose body was not read (404, 405) must not leave its bytes on a kept-alive connection.
  const unread = !req.complete && (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined);
  if (closeAfter || unread) res.setHeader('Connection', 'close');
  res.end(text);
  if (unread) req.resume();
}

/**
 * Runs the server until SIGINT or SIGTERM (or `until` resolves), printing `listening on URL` as the first
 * line: what `blis evaluate --serve` does.
 */
export async function serveEvaluationUntilSignal(o: EvalServerOptions, print: (line: string) => void, until?: Promise<void>): Promise<void> {
  const server = await startEvaluationServer(o);
  print(`listening on ${server.url}\n`);
  await (until ?? new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  }));
  await server.close();
}
