/** `blis policies`: the control points, templates and decision-tree features as one JSON document. */
import type { Command } from 'commander';
import type { Io } from './io.js';

export function registerPoliciesCommand(root: Command, io: Io): void {
  const c = root
    .command('policies')
    .description('list the policy control points, parameterized templates (parameters, ranges, defaults) and decision-tree features as JSON');
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  c.action(async () => {
    // Loaded on demand: the catalog pulls in the template and feature tables.
    const { policyCatalog } = await import('../policy/catalog.js');
    io.stdout(`${JSON.stringify(policyCatalog(), null, 2)}\n`);
  });
}
