/**
 * Vega-Lite specs -> SVG text, in Node, with no browser: compile with vega-lite, render headless with vega's
 * `renderer: 'none'` view. The output depends only on the spec (text is measured by vega's built-in width
 * estimate, not by installed fonts), so the same data gives the same bytes.
 *
 * The SVG is inlined into one HTML page, so it is made safe for that: the namespace URLs are dropped (inline
 * SVG in HTML needs none, and the report holds no URL at all), and every id — vega names clip paths and
 * gradients `clip1`, `gradient_0`... in every chart — is prefixed with the chart's id.
 */
import type { TopLevelSpec } from 'vega-lite';

type VegaModule = typeof import('vega');
type VegaLiteModule = typeof import('vega-lite');

let libs: Promise<{ vega: VegaModule; vl: VegaLiteModule }> | null = null;

/** Loaded on first use: the charting libraries cost startup time every other command should not pay. */
function load(): Promise<{ vega: VegaModule; vl: VegaLiteModule }> {
  libs ??= Promise.all([import('vega'), import('vega-lite')]).then(([vega, vl]) => ({ vega, vl }));
  return libs;
}

/** Shared look: one font, white background, no interactive bits (the page has no scripts). */
export const CHART_CONFIG = {
  font: 'sans-serif',
  background: 'white',
  view: { stroke: '#ccc' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12, labelLimit: 220 },
  title: { fontSize: 13, anchor: 'start' },
} as const;

export async function renderSvg(spec: TopLevelSpec, chartId: string): Promise<string> {
  const { vega, vl } = await load();
  const compiled = vl.compile({ ...spec, config: { ...CHART_CONFIG, ...(spec.config ?? {}) } }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return inlineSafe(await view.toSVG(), chartId);
  } finally {
    view.finalize();
  }
}

/** Drops namespace URLs and prefixes ids (and their references) with the chart id. */
export function inlineSafe(svg: string, chartId: string): string {
  return svg
    .replace(/\s+xmlns(?::xlink)?="[^"]*"/g, '')
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${chartId}-${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${chartId}-${id})`)
    .replace(/\b(xlink:)?href="#([^"]+)"/g, (_, x: string | undefined, id: string) => `${x ?? ''}href="#${chartId}-${id}"`);
}
