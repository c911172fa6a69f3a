// Module customization hooks for inject-fault.mjs: the target module is served as a re-export of itself with one
// export shadowed by a throwing function (a local export wins over `export *`). With `#name@N` the first N calls
// still reach the original (a server that calls the function once while warming up, before it listens).
let modulePath = '';
let exportName = '';
let passThrough = 0;

export function initialize(data) {
  const [mod, spec = ''] = String(data).split('#');
  const [name, skip = '0'] = spec.split('@');
  modulePath = mod;
  exportName = name;
  passThrough = Number(skip);
}

export async function load(url, context, nextLoad) {
  if (modulePath !== '' && url.endsWith(`/${modulePath}`)) {
    const original = JSON.stringify(`${url}?original`);
    const source = `export * from ${original};\n` +
      `import { ${exportName} as original } from ${original};\n` +
      `let calls = 0;\n` +
      `export function ${exportName}(...args) {\n` +
      `  if (calls++ < ${passThrough}) return original(...args);\n` +
      `  throw new TypeError('injected fault in ${exportName}');\n` +
      `}\n`;
    return { format: 'module', source, shortCircuit: true };
  }
  // The bundled build (scripts/build.js) has no file per module: the function lives in a chunk under dist/. There
  // its top-level definition is renamed and a throwing function of the same name takes its place.
  if (modulePath.startsWith('dist/') && url.includes('/dist/') && url.endsWith('.js')) {
    const r = await nextLoad(url, context);
    const text = String(r.source);
    const def = new RegExp(`^(export )?(async )?function ${exportName}\\(`, 'm');
    if (!def.test(text)) return r;
    const source = text.replace(def, (_m, ex = '', as = '') => `${ex}${as}function ${exportName}$original(`) +
      `\nlet ${exportName}$calls = 0;\n` +
      `function ${exportName}(...args) {\n` +
      `  if (${exportName}$calls++ < ${passThrough}) return ${exportName}$original(...args);\n` +
      `  throw new TypeError('injected fault in ${exportName}');\n` +
      `}\n`;
    return { ...r, source, shortCircuit: true };
  }
  return nextLoad(url, context);
}
