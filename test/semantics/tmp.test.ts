import { it } from 'vitest';
import { simulate } from '../../src/sim/simulate.js';
import { readFileSync } from 'node:fs';
it('x', async () => {
  const CHAT = readFileSync('test/semantics/replay.test.ts', 'utf8').split('const CHAT = `')[1]!.split('`;')[0]!;
  const r = await simulate({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', workloadSpec: 'c.yaml', files: { 'c.yaml': CHAT }, outputs: { trace: true } });
  console.log(r.files.traceYaml, r.files.traceCsv);
});
