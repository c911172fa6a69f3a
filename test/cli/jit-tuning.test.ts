/**
 * bin/load-cli.js's tuneJit lowers V8's inlining budget for the CLI's process after the CLI is loaded (so the
 * code cache, checked against V8's flag hash, still applies), unless BLIS_V8_DEFAULTS=1 or the user chose an
 * inlining flag. V8 flags cannot be read back from JavaScript, but its flag hash shows in the header of any
 * code cache the process makes: that is what these checks compare.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../io/processes.js';

const PROBE = `
const vm = require('node:vm');
const hash = () => new vm.Script('0').createCachedData().subarray(12, 16).toString('hex');
const before = hash();
const tuned = require(${JSON.stringify(path.join(ROOT, 'bin', 'load-cli.js'))}).tuneJit();
process.stdout.write(JSON.stringify({ tuned, changed: hash() !== before }));
`;

function probe(extraEnv: Record<string, string>, nodeArgs: string[] = []): { tuned: boolean; changed: boolean } {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  if (!('NODE_OPTIONS' in extraEnv)) delete env['NODE_OPTIONS'];
  if (!('BLIS_V8_DEFAULTS' in extraEnv)) delete env['BLIS_V8_DEFAULTS'];
  const r = spawnSync(process.execPath, [...nodeArgs, '-e', PROBE], { env, encoding: 'utf8', timeout: 30_000 });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { tuned: boolean; changed: boolean };
}

describe('the CLI tunes V8 for short runs', () => {
  it('lowers the inlining budget by default', () => {
    expect(probe({})).toEqual({ tuned: true, changed: true });
  });

  it('leaves V8 alone with BLIS_V8_DEFAULTS=1', () => {
    expect(probe({ BLIS_V8_DEFAULTS: '1' })).toEqual({ tuned: false, changed: false });
  });

  it('leaves an inlining flag the user gave node alone', () => {
    expect(probe({}, ['--max-inlined-bytecode-size-cumulative=500'])).toEqual({ tuned: false, changed: false });
    expect(probe({}, ['--max_inlined_bytecode_size=100'])).toEqual({ tuned: false, changed: false });
  });
});
