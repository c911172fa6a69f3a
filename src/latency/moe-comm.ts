/**
 * MoE dispatch/combine communication backends (vLLM `VLLM_ALL2ALL_BACKEND` names) and the volume family each
 * belongs to. The family decides how trained-physics sizes the DP>1 dispatch term: the all-gather family
 * moves every token's hidden state once per phase; the all-to-all family moves each token to its top-k
 * experts, so its volume carries a top-k factor.
 */
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
