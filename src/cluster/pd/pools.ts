/**
 * P/D pool topology (reference pool.go, blis-cluster.md §8.1): roles are bit flags so a shared-role pod is a
 * member of both the prefill and the decode pool. Startup membership by index: `instance_0..P-1` prefill,
 * the next D decode, the next S prefill|decode, the next E encode (E/P/D); the rest have no role and are never
 * routed while pools exist. Membership never changes during a run (INV-PD-5).
 */

export const PoolRole = {
  None: 0,
  Prefill: 1,
  Decode: 2,
  PrefillDecode: 3,
  /** Encode pool (E/P/D): routed to for multimodal input, never a prefill or decode pod. */
  Encode: 4,
} as const;
export type PoolRole = (typeof PoolRole)[keyof typeof PoolRole];

/** `role` carries every bit of `wanted` (false for an empty `wanted`). */
export function hasRole(role: number, wanted: number): boolean {
  return wanted !== 0 && (role & wanted) === wanted;
}

export function roleName(role: number): string {
  switch (role) {
    case PoolRole.Prefill:
      return 'prefill';
    case PoolRole.Decode:
      return 'decode';
    case PoolRole.PrefillDecode:
      return 'prefill-decode';
    case PoolRole.Encode:
      return 'encode';
    default:
      return 'none';
  }
}

/** Reference ValidatePoolTopology: null when valid (all zero = disabled), else the reason. */
export function poolTopologyError(prefill: number, decode: number, shared: number, total: number, encode = 0): string | null {
  if (prefill < 0) return `prefill-instances must be >= 0, got ${prefill}`;
  if (decode < 0) return `decode-instances must be >= 0, got ${decode}`;
  if (shared < 0) return `prefill-decode-instances must be >= 0, got ${shared}`;
  if (encode < 0) return `encode-instances must be >= 0, got ${encode}`;
  if (prefill === 0 && decode === 0 && shared === 0 && encode === 0) return null;
  // The encode stage precedes decode: it needs a decode-capable pool.
  if (encode > 0 && prefill === 0 && decode === 0 && shared === 0) {
    return `encode-instances (${encode}) requires a decode-capable pool: set --prefill-instances, --decode-instances, or --prefill-decode-instances > 0`;
  }
  if (shared === 0 && (prefill === 0 || decode === 0)) {
    return `both --prefill-instances and --decode-instances must be set when PD disaggregation is enabled without shared-role pods (got prefill=${prefill}, decode=${decode})`;
  }
  const sum = prefill + decode + shared + encode;
  if (sum > total) {
    return `prefill-instances (${prefill}) + decode-instances (${decode}) + prefill-decode-instances (${shared}) + encode-instances (${encode}) = ${sum} exceeds num-instances (${total})`;
  }
  return null;
}

/** Role of every startup instance index. */
export function rolesFromCounts(total: number, prefill: number, decode: number, shared: number, encode = 0): PoolRole[] {
  const roles: PoolRole[] = [];
  for (let i = 0; i < total; i++) {
    if (i < prefill) roles.push(PoolRole.Prefill);
    else if (i < prefill + decode) roles.push(PoolRole.Decode);
    else if (i < prefill + decode + shared) roles.push(PoolRole.PrefillDecode);
    else if (i < prefill + decode + shared + encode) roles.push(PoolRole.Encode);
    else roles.push(PoolRole.None);
  }
  return roles;
}
