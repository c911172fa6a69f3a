/**
 * Corrected-physics facts (interconnect, kernel efficiencies) for the GPU a run names, never borrowed from
 * another GPU: a catalog GPU (under any common spelling, see {@link resolveGpuName}) has its own entry in
 * gpu-physics.ts; a `--hardware-config` GPU gives them explicitly or has them derived from its datasheet
 * fields and its class (architecture generation); otherwise the run is refused, naming the missing fields.
 */
import {
  GPU_CLASSES,
  GPU_CLASS_NAMES,
  NO_LINK,
  findGpuPhysics,
  interNodeLink,
  isNoP2PLink,
  nvlinkLink,
  pcieLink,
  type EfficiencySpec,
  type GpuClass,
  type GpuPhysics,
  type InterconnectSpec,
  type LinkSpec,
} from './catalog/gpu-physics.js';

/** What a `--hardware-config` entry says about corrected-physics (any subset); the rest is derived. */
export interface UserGpuPhysics {
  /** Architecture generation: sets the kernel efficiencies (and NVLink per-call latency). */
  readonly class?: GpuClass;
  /** Datasheet NVLink bandwidth per GPU, GB/s bidirectional (H100 SXM 900); 0/absent = no NVLink. */
  readonly NVLinkGBs?: number;
  /** PCIe generation the GPUs talk over when there is no NVLink (3–6). */
  readonly PCIeGen?: number;
  /** Peer-to-peer transfers between the PCIe cards (default: the class's, else the catalog card's, else true). */
  readonly PCIeP2P?: boolean;
  readonly gpusPerNode?: number;
  readonly interconnect?: InterconnectSpec;
  readonly efficiency?: EfficiencySpec;
  /** Query rows a decode fills in a mixed step's attention kernel (GpuPhysics.mixedDecodeTileRows). */
  readonly mixedDecodeTileRows?: number;
}

export type GpuPhysicsResolution =
  | { readonly ok: true; readonly physics: GpuPhysics; readonly source: string }
  | { readonly ok: false; readonly missing: readonly string[] };

const f2 = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/0+$/, ''));
const showLink = (l: LinkSpec): string =>
  `${l.kind} (small messages ${f2(l.small.latencyUs)} µs + ${f2(l.small.busBandwidthGBs)} GB/s, large ${f2(l.large.latencyUs)} µs + ${f2(l.large.busBandwidthGBs)} GB/s)`;

/** One line with every value corrected-physics will use, for `--log info`. */
export function describeGpuPhysics(p: GpuPhysics): string {
  const e = p.efficiency;
  const i = p.interconnect;
  const tile = p.mixedDecodeTileRows ?? 0;
  return `efficiency gemm ${f2(e.gemm)}, attention ${f2(e.attention)}, weightRead ${f2(e.weightRead)}, kvRead ${f2(e.kvRead)}` +
    `${tile > 0 ? `, a decode in a mixed step fills ${tile} query rows` : ''}; ` +
    `intra-node ${showLink(i.intraNode)}, ${i.gpusPerNode} GPUs per node, inter-node ${showLink(i.interNode)}`;
}

/**
 * The physics of GPU `name` for a deployment of `gpus` GPUs (tp·dp): `explicit` when the entry gave both parts
 * (kept), else the catalog entry `catalogName` stands for, else derived from `user`. Interconnect facts are
 * needed only when the deployment spans more than one GPU.
 */
export function resolveGpuPhysics(
  explicit: GpuPhysics | undefined,
  user: UserGpuPhysics | undefined,
  catalogName: string | undefined,
  gpus: number,
): GpuPhysicsResolution {
  if (explicit !== undefined) return { ok: true, physics: explicit, source: 'as given in --hardware-config' };
  const catalog = catalogName === undefined ? undefined : findGpuPhysics(catalogName);
  const u = user ?? {};
  const cls = u.class;
  const missing: string[] = [];
  const efficiency = u.efficiency ?? (cls !== undefined ? GPU_CLASSES[cls].efficiency : catalog?.efficiency);
  if (efficiency === undefined) missing.push(`"class" (${GPU_CLASS_NAMES.join(', ')}) or "efficiency"`);
  let interconnect: InterconnectSpec | undefined = u.interconnect;
  const parts: string[] = [];
  if (interconnect === undefined) {
    const perNode = u.gpusPerNode ?? catalog?.interconnect.gpusPerNode ?? 8;
    const nvlink = (u.NVLinkGBs ?? 0) > 0;
    if (nvlink && cls === undefined && u.efficiency !== undefined && catalog === undefined) missing.push('"class" (for the NVLink latency)');
    else if (nvlink) {
      const c = cls ?? 'hopper';
      interconnect = { intraNode: nvlinkLink(u.NVLinkGBs!, c), interNode: interNodeLink(true, c), gpusPerNode: perNode };
      parts.push(`NVLink ${u.NVLinkGBs} GB/s`);
    } else if (u.PCIeGen !== undefined) {
      // P2P: as the entry says, else the class's default, else the catalog card's, else on.
      const p2p = u.PCIeP2P ?? (cls !== undefined ? GPU_CLASSES[cls].pcieP2P : catalog !== undefined ? !isNoP2PLink(catalog.interconnect.intraNode) : true);
      const l = pcieLink(u.PCIeGen, p2p);
      if (l === undefined) missing.push(`"PCIeGen" 3, 4, 5 or 6 (got ${u.PCIeGen})`);
      else {
        interconnect = { intraNode: l, interNode: interNodeLink(false, cls), gpusPerNode: perNode };
        parts.push(`PCIe ${u.PCIeGen}${p2p ? '' : ' without P2P'}`);
      }
    } else if (catalog !== undefined) interconnect = catalog.interconnect;
    else if (gpus <= 1) interconnect = { intraNode: NO_LINK, interNode: NO_LINK, gpusPerNode: perNode };
    else missing.push('"NVLinkGBs" or "PCIeGen" (how the GPUs talk: tensor/data parallelism spans more than one GPU) or "interconnect"');
  }
  if (missing.length > 0 || efficiency === undefined || interconnect === undefined) return { ok: false, missing };
  const from = [
    ...(u.efficiency !== undefined ? ['explicit efficiency'] : cls !== undefined ? [`class ${cls}`] : []),
    ...(u.interconnect !== undefined ? ['explicit interconnect'] : parts),
  ];
  const source = catalog !== undefined
    ? `the catalog's ${catalogName}${from.length > 0 ? ` with ${from.join(', ')}` : ''}`
    : `derived from ${from.join(' and ')}`;
  const tile = u.mixedDecodeTileRows ?? (cls !== undefined ? GPU_CLASSES[cls].mixedDecodeTileRows : catalog?.mixedDecodeTileRows ?? 0);
  return { ok: true, physics: { efficiency, interconnect, ...(tile > 0 ? { mixedDecodeTileRows: tile } : {}) }, source };
}
