/**
 * The page: one self-contained HTML file with inline styles and inline SVG charts, no scripts and no URL of
 * any kind, so it opens the same anywhere, offline, forever. Nothing in it depends on when or where it was
 * made: same input, same bytes.
 */
import type { Chart } from './charts.js';
import { renderSvg } from './render.js';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Numbers for people: integers as they are, others to at most 3 decimals. */
export function fmt(v: unknown): string {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  }
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function table(headers: readonly string[], rows: readonly (readonly unknown[])[], numericFrom = 1): string {
  if (rows.length === 0) return '';
  const head = headers.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td${i >= numericFrom ? ' class="num"' : ''}>${esc(fmt(c))}</td>`).join('')}</tr>`).join('\n');
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>\n`;
}

export async function figure(c: Chart, idPrefix = ''): Promise<string> {
  const id = `${idPrefix}${c.id}`;
  const svg = await renderSvg(c.spec, id);
  return `<figure class="chart" id="chart-${esc(id)}" data-chart="${esc(id)}" data-points="${c.points}">\n<figcaption>${esc(c.title)}</figcaption>\n${svg}\n<p class="how">${esc(c.how)}</p>\n</figure>\n`;
}

export async function figures(charts: readonly Chart[], idPrefix = ''): Promise<string> {
  let s = '';
  // One at a time: rendering order is part of what makes the bytes reproducible.
  for (const c of charts) s += await figure(c, idPrefix);
  return s;
}

export interface PageSection {
  readonly id: string;
  readonly title: string;
  readonly body: string;
}

export function note(text: string): string {
  return `<p class="note">${esc(text)}</p>\n`;
}

const STYLE = `
body{font-family:sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:16px 28px}
header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#cfd8dc}
nav{padding:8px 28px;background:#eceff1;font-size:14px}
nav a{margin-right:16px;color:#37474f}
main{padding:8px 28px 40px}
section{margin-top:24px}
h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px}
h3{font-size:15px}
table{border-collapse:collapse;font-size:13px;margin:8px 0 16px;background:#fff}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f0f0f0}
td.better{color:#1b5e20;background:#e8f5e9;font-weight:bold}
td.worse{color:#b71c1c;background:#ffebee;font-weight:bold}
figure.chart{display:inline-block;vertical-align:top;margin:8px 16px 16px 0;background:#fff;border:1px solid #e0e0e0;padding:8px}
figcaption{font-weight:bold;font-size:14px;margin-bottom:4px}
p.how{font-size:12px;color:#555;max-width:700px;margin:4px 0 0}
p.note{font-size:13px;color:#555;font-style:italic}
details{margin:8px 0}
summary{cursor:pointer;font-weight:bold}
footer{font-size:12px;color:#777;padding:12px 28px}
`;

export function page(title: string, subtitle: string, sections: readonly PageSection[], footer: string): string {
  const nav = sections.map((s) => `<a href="#${esc(s.id)}">${esc(s.title)}</a>`).join('');
  const body = sections.map((s) => `<section id="${esc(s.id)}">\n<h2>${esc(s.title)}</h2>\n${s.body}</section>\n`).join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${esc(title)}</h1><p>${esc(subtitle)}</p></header>
<nav>${nav}</nav>
<main>
${body}</main>
<footer>${esc(footer)}</footer>
</body>
</html>
`;
}
