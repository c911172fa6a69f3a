/**
 * Checks of a workload against a deployment before simulating (one clear error instead of silently lost
 * requests): every request's model is served (requests naming none go to the default model), and no request
 * needs more KV than a decode pool of its model holds (a disaggregated request's whole prompt and output live
 * on one decode instance).
 */
import type { Request } from '../domain/request.js';
import { PoolRole } from '../cluster/pd/pools.js';
import { ConfigError } from './config-error.js';
import type { DeploymentEngineSetup } from './resolve-deployment.js';

/** Checks every request of a materialised workload before the run starts. */
export function checkDeploymentRequests(d: DeploymentEngineSetup, requests: readonly Request[], blockSize: number): void {
  const check = requestChecker(d, blockSize);
  for (const r of requests) check(r);
}

/** A streamed workload is checked as it is generated: each request before it reaches the cluster. */
export function* checkedDeploymentStream(d: DeploymentEngineSetup, requests: Iterable<Request>, blockSize: number): Generator<Request> {
  const check = requestChecker(d, blockSize);
  for (const r of requests) {
    check(r);
    yield r;
  }
}

function requestChecker(d: DeploymentEngineSetup, blockSize: number): (r: Request) => void {
  const models = new Set(d.models);
  const decodeBlocks = new Map<string, { blocks: number; target: string }>();
  for (const p of d.pools) {
    if (p.role !== PoolRole.Decode) continue;
    const cur = decodeBlocks.get(p.model);
    if (cur === undefined || p.overrides.kvTotalBlocks < cur.blocks) decodeBlocks.set(p.model, { blocks: p.overrides.kvTotalBlocks, target: p.target });
  }
  return (r) => {
    const model = r.model === '' ? d.defaultModel : r.model;
    if (!models.has(model)) {
      throw new ConfigError('unknown-model', `request ${r.id} names model "${r.model}", which ${d.file} does not deploy (deployed: ${d.models.join(', ')}); add the model to the deployment file or fix the workload`);
    }
    const dec = decodeBlocks.get(model);
    if (dec !== undefined) {
      const need = Math.ceil((r.inputLen + r.outputLen) / blockSize);
      if (need > dec.blocks) {
        throw new ConfigError('bad-config', `${d.file}: decode pool ${dec.target} holds ${dec.blocks} KV blocks, but request ${r.id} needs ${need} (${r.inputLen} input + ${r.outputLen} output tokens); give the decode pool more KV (total_kv_blocks, hardware or tp)`);
      }
    }
  };
}
