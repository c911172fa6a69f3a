// Module customization hooks for inject-fault.mjs: the target module is served as a re-export of itself with one
// export shadowed by a throwing function (a local export wins over `export *`).
let modulePath = '';
let exportName = '';

export function initialize(data) {
  [modulePath, exportName] = String(data).split('#');
}

export async function load(url, context, nextLoad) {
  if (modulePath !== '' && url.endsWith(`/${modulePath}`)) {
    const source = `export * from ${JSON.stringify(`${url}?original`)};\n` +
      `export function ${exportName}() { throw new TypeError('injected fault in ${exportName}'); }\n`;
    return { format: 'module', source, shortCircuit: true };
  }
  return nextLoad(url, context);
}
