/**
 * A policy bundle's text through the bounded loader (src/format/yaml.ts): the first YAML document of the stream
 * (the reference decodes one document), size-capped, with the alias and merge-key expansion and the depth
 * measured before anything is decoded. Its errors are {@link PolicyConfigError}s at `file:line:col`.
 */
import { parseYaml, type ParsedYaml } from '../format/yaml.js';
import { PolicyConfigError } from './errors.js';

export function readBundleYaml(text: string, file: string, yaml: { readonly schema?: 'failsafe'; readonly uniqueKeys: false }): ParsedYaml {
  return parseYaml(text, file, {
    documents: 'first',
    yaml,
    fail: (pos, problem, fix) => {
      throw new PolicyConfigError('POLICY_YAML', { file, pos }, '', problem, fix);
    },
  });
}
