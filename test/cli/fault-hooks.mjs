// Module customization hooks for inject-fault.mjs: the target module is served as a re-export of itself with one
// export shadowed by a throwing function (a local export wins over `export *`). With `#name@N` the first N calls
// still reach the original (a server that calls the function once while warming up, before it listens).
let modulePath = '';
let exportName = '';
let passThrough = 0;

/** "dist/path/module.js#export@N" -> its parts. */
export function parseFault(data) {
  const [mod, spec = ''] = String(data).split('#');
  const [name, skip = '0'] = spec.split('@');
  return { modulePath: mod, exportName: name, passThrough: Number(skip) };
}

export function initialize(data) {
  ({ modulePath, exportName, passThrough } = parseFault(data));
}

/**
 * A bundle (an ESM chunk under dist/, or the one-file CLI dist/cli.cjs) has no file per module: the function's
 * top-level definition is renamed and a throwing function of the same name takes its place. The text is
 * unchanged when it does not define the function.
 */
export function injectFault(text, name, skip) {
  const def = new RegExp(`^(export )?(async )?function ${name}\\(`, 'm');
  if (!def.test(text)) return text;
  return text.replace(def, (_m, ex = '', as = '') => `${ex}${as}function ${name}$original(`) +
    `\nlet ${name}$calls = 0;\n` +
    `function ${name}(...args) {\n` +
    `  if (${name}$calls++ < ${skip}) return ${name}$original(...args);\n` +
    `  throw new TypeError('injected fault in ${name}');\n` +
    `}\n`;
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
  if (modulePath.startsWith('dist/') && url.includes('/dist/') && url.endsWith('.js')) {
    const r = await nextLoad(url, context);
    const text = String(r.source);
    const source = injectFault(text, exportName, passThrough);
    return source === text ? r : { ...r, source, shortCircuit: true };
  }
  return nextLoad(url, context);
}
