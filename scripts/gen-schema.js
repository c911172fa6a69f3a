#!/usr/bin/env node
// Writes docs/evaluate-result.schema.json from the zod schemas in src/evaluate/result-schema.ts (run after
// `npm run build`; `npm run schema` does both). A test fails when the committed file is out of date.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { evaluateOutputJsonSchema } from '../dist/evaluate/result-schema.js';

const out = fileURLToPath(new URL('../docs/evaluate-result.schema.json', import.meta.url));
writeFileSync(out, `${JSON.stringify(evaluateOutputJsonSchema(), null, 2)}\n`);
process.stderr.write(`wrote ${out}\n`);
