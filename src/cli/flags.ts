/**
 * Commander registration of the option table (src/sim/options.ts) for `blis run` and `blis replay`, and of the
 * I/O commands' flags (./flags-io.ts).
 */
import { Option, type Command } from 'commander';
import { FlagValues, camel } from '../sim/options.js';
import { UsageError } from './errors.js';
import { commandFlags, type CommandName } from './flags-io.js';
import { HELP_GROUPS, groupHeading, helpGroupOf } from './help-groups.js';

export { FlagValues } from '../sim/options.js';

export function registerFlags(cmd: Command, command: CommandName): void {
  // Grouped as docs/usage.md groups them (help-groups.ts); registered in group order, which --help follows.
  const rank = (name: string): number => {
    const g = helpGroupOf(command, name);
    return g === null ? HELP_GROUPS.length : HELP_GROUPS.indexOf(g);
  };
  const flags = [...commandFlags(command)].sort((a, b) => rank(a.name) - rank(b.name));
  cmd.addHelpOption(new Option('-h, --help', 'display help for command').helpGroup(groupHeading('General')));
  for (const f of flags) {
    const valueName = f.kind === 'bool' ? '' : f.kind === 'floats' ? ' <list>' : ' <value>';
    const opt = new Option(`--${f.name}${valueName}`, f.help);
    if (f.kind !== 'bool') opt.default(Array.isArray(f.def) ? f.def.join(',') : String(f.def), f.helpDefault);
    if (f.hidden === true) opt.hideHelp();
    const group = helpGroupOf(command, f.name);
    opt.helpGroup(groupHeading(group ?? 'General'));
    cmd.addOption(opt);
    for (const a of f.aliases ?? []) {
      cmd.addOption(new Option(`--${a}${valueName}`, `deprecated alias of --${f.name}`).hideHelp());
    }
  }
}

/** Reads commander's parsed options, folding deprecated aliases into their flags. */
export function readFlags(cmd: Command, command: CommandName): FlagValues {
  const raw = { ...cmd.opts() } as Record<string, unknown>;
  const explicit = new Set<string>();
  for (const f of commandFlags(command)) {
    // Commander stores a boolean `--no-x` as x = false; expose it under its own name.
    const attr = f.kind === 'bool' && f.name.startsWith('no-') ? camel(f.name.slice(3)) : camel(f.name);
    if (attr !== camel(f.name)) raw[camel(f.name)] = raw[attr] === false;
    if (cmd.getOptionValueSource(attr) === 'cli') explicit.add(f.name);
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
