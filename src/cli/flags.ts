/**
 * Commander registration of the option table (src/sim/options.ts) for `blis run` and `blis replay`.
 */
import { Option, type Command } from 'commander';
import { FLAGS, FlagValues, camel } from '../sim/options.js';
import { UsageError } from './errors.js';

export { FlagValues } from '../sim/options.js';

export function registerFlags(cmd: Command, scope: 'run' | 'replay'): void {
  for (const f of FLAGS) {
    if (f.scope !== 'shared' && f.scope !== scope) continue;
    const valueName = f.kind === 'bool' ? '' : f.kind === 'floats' ? ' <list>' : ' <value>';
    const opt = new Option(`--${f.name}${valueName}`, f.help);
    if (f.kind !== 'bool') opt.default(Array.isArray(f.def) ? f.def.join(',') : String(f.def));
    cmd.addOption(opt);
    for (const a of f.aliases ?? []) {
      cmd.addOption(new Option(`--${a}${valueName}`, `deprecated alias of --${f.name}`).hideHelp());
    }
  }
}

/** Reads commander's parsed options, folding deprecated aliases into their flags. */
export function readFlags(cmd: Command, scope: 'run' | 'replay'): FlagValues {
  const raw = { ...cmd.opts() } as Record<string, unknown>;
  const explicit = new Set<string>();
  for (const f of FLAGS) {
    if (f.scope !== 'shared' && f.scope !== scope) continue;
    if (cmd.getOptionValueSource(camel(f.name)) === 'cli') explicit.add(f.name);
    for (const a of f.aliases ?? []) {
      if (cmd.getOptionValueSource(camel(a)) === 'cli') {
        if (explicit.has(f.name)) throw new UsageError('bad-flag', `--${a} is a deprecated alias of --${f.name}; give only one of them`);
        raw[camel(f.name)] = raw[camel(a)];
        explicit.add(f.name);
      }
    }
  }
  return new FlagValues(raw, explicit);
}
