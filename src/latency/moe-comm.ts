/**
 * MoE dispatch/combine communication backends (vLLM `VLLM_ALL2ALL_BACKEND` names) and the volume family each
 * belongs to. The family decides how the DP>1 dispatch term is sized: the all-gather family moves every token's
 * hidden state once per phase; the all-to-all family moves each token to its experts — trained-physics (the
 * reference's formula) with a top-k factor, corrected-physics once per other rank holding one of them
 * ({@link moeDispatchCopies}).
 */
import { LatencyConfigError, LatencyErrorCode } from './errors.js';

export const MOE_COMM_BACKENDS = {
  naive: 'allgather',
  allgather_reducescatter: 'allgather',
  pplx: 'all2all',
  deepep_high_throughput: 'all2all',
  deepep_low_latency: 'all2all',
  mori: 'all2all',
  flashinfer_all2allv: 'all2all',
} as const satisfies Record<string, 'allgather' | 'all2all'>;

export type MoECommBackend = keyof typeof MOE_COMM_BACKENDS;
export type MoECommFamily = (typeof MOE_COMM_BACKENDS)[MoECommBackend];

/** Valid `--moe-comm-backend` values, in vLLM's declared order. */
export const MOE_COMM_BACKEND_NAMES = Object.keys(MOE_COMM_BACKENDS) as readonly MoECommBackend[];

/** vLLM's default; an empty or absent backend name means this. */
export const DEFAULT_MOE_COMM_BACKEND: MoECommBackend = 'allgather_reducescatter';

export function isMoECommBackend(name: string): name is MoECommBackend {
  return Object.hasOwn(MOE_COMM_BACKENDS, name);
}

/**
 * The dispatch volume per token of a MoE layer at DP > 1, in hidden states (d × activation bytes) before the
 * collective's own (n − 1)/n, over an expert group of n GPUs. vLLM's default backend, allgather_reducescatter (as
 * naive), all-gathers the hidden states of the dp ranks before the experts and reduce-scatters them after, with or
 * without expert parallelism: dp copies, of which each GPU receives the share (n − 1)/n. The all-to-all backends
 * (expert parallelism only) send a token once to every other rank that holds at least one of its top-k experts, not
 * once per expert: {@link remoteRanksPerToken} copies (times n/(n − 1), undoing the collective's share).
 */
export function moeDispatchCopies(backend: MoECommBackend, expertParallel: boolean, experts: number, k: number, n: number, dp: number): number {
  if (MOE_COMM_BACKENDS[backend] === 'allgather' || !expertParallel || n <= 1) return dp;
  return (remoteRanksPerToken(experts, k, n) * n) / (n - 1);
}

/**
 * Expected number of the other n − 1 ranks that hold at least one of a token's k experts, the E experts spread
 * evenly (E/n per rank) and the k drawn without replacement: (n − 1) · (1 − Π_{i<k} (E − E/n − i)/(E − i)).
 */
export function remoteRanksPerToken(experts: number, k: number, n: number): number {
  const perRank = experts / n;
  let none = 1;
  for (let i = 0; i < k; i++) none *= Math.max(0, experts - perRank - i) / (experts - i);
  return (n - 1) * (1 - none);
}

/** The backend named (empty or absent: vLLM's default), or a LatencyConfigError naming the valid ones. */
export function moeCommBackendOf(name: string | undefined, model: string): MoECommBackend {
  const backend = name === undefined || name === '' ? DEFAULT_MOE_COMM_BACKEND : name;
  if (!isMoECommBackend(backend)) {
    throw new LatencyConfigError(LatencyErrorCode.UnknownMoECommBackend, 'moeCommBackend', `${model}: unknown MoE comm backend "${backend}"; valid: ${MOE_COMM_BACKEND_NAMES.join(', ')}`);
  }
  return backend;
}
