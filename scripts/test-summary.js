// Prints vitest's totals as one plain closing line ("tests: N passed, N failed, N skipped") for CI logs.
import { readFileSync } from 'node:fs';

const r = JSON.parse(readFileSync(process.argv[2] ?? '.tmp/vitest.json', 'utf8'));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
process.exitCode = r.numFailedTests > 0 || r.numPassedTests === 0 ? 1 : 0;
