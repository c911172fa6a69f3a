/**
 * The package from a CommonJS project (issue 29): `require('blis-ts')` resolves through the `require` export
 * condition to the ESM build, which Node (>= 20.19, the package's engines) loads synchronously.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../io/processes.js';

describe('require(\'blis-ts\') from CommonJS', () => {
  let dir = '';
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'blis-cjs-'));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'blis-ts'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true, type: 'commonjs' }));
    writeFileSync(join(dir, 'consumer.js'), [
      "const { simulate, BlisError } = require('blis-ts');",
      "simulate({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 20, log: 'error' })",
      '  .then((r) => simulate({ mode: \'run\', numInstances: 0 }).catch((e) => console.log(JSON.stringify({ completed: r.metrics.completed_requests, blisError: e instanceof BlisError }))));',
    ].join('\n'));
  }, 180_000);
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('loads the library and runs a simulation', () => {
    const r = spawnSync(process.execPath, ['consumer.js'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ completed: 20, blisError: true });
  });
});
