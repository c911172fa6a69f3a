/**
 * A bundle's P/D and encode deciders against the flags. As for the other control points an explicit
 * `--pd-decider` / `--encode-decider` beats the bundle's `disaggregation` / `encode` section (resolve-policies
 * drops it with a warning); what remains to refuse is a combination that cannot mean what it says: a decider
 * without the pools it decides for, and a `--pd-prefix-threshold` that would silently do nothing because the
 * bundle's decider replaces the built-in one it parameterizes.
 */
import { ConfigError } from './config-error.js';
import type { PdEngineSetup } from './engine-setup.js';
import type { FlagValues } from './options.js';
import type { ResolvedPolicies } from './resolve-policies.js';

export function checkBundleDeciders(f: FlagValues, pol: ResolvedPolicies, pd: PdEngineSetup | null | undefined): void {
  const specs = pol.policy.evolvable?.evolvable.specs ?? {};
  const file = f.str('policy-config');
  if (specs.disaggregation !== undefined) {
    if (!pd) {
      throw new ConfigError('bad-flag', `the disaggregation policy of ${file} needs prefill/decode pools: set --prefill-instances and --decode-instances (or a deployment file with prefill and decode pools), or remove the disaggregation section`);
    }
    if (f.changed('pd-prefix-threshold')) {
      throw new ConfigError('bad-flag', `--pd-prefix-threshold parameterizes --pd-decider prefix-threshold, but the disaggregation policy of ${file} replaces that decider; set the threshold in the bundle (template prefix_threshold_disaggregation, parameter threshold) or choose the built-in with --pd-decider prefix-threshold`);
    }
  }
  if (specs.encode !== undefined && (pd?.encodeDecider ?? null) === null) {
    throw new ConfigError('bad-flag', `the encode policy of ${file} needs an encode pool: set --encode-instances (with P/D pools), or remove the encode section`);
  }
}
