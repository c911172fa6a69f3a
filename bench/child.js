// Runs one CLI invocation in this process and reports its peak RSS on fd 3 (the bench harness reads it).
import { writeSync } from 'node:fs';
import { main } from '../dist/cli/main.js';

let out = '';
const code = await main(process.argv.slice(2), {
  stdout: (t) => void (out += t),
  warn: () => undefined,
  error: (t) => void process.stderr.write(`error: ${t}\n`),
});
const doc = code === 0 ? JSON.parse(out) : null;
writeSync(3, JSON.stringify({
  code,
  maxRssKiB: process.resourceUsage().maxRSS,
  completed: doc?.simulation_metrics?.completed_requests ?? 0,
}));
process.exitCode = code;
