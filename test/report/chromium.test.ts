/**
 * Opens the report of a 4-instance run with decision traces and SLO classes in headless Chromium (Debian's
 * `chromium`, driven by playwright-core; never a downloaded browser): every chart is there with data, the
 * page logs no error and asks the network for nothing. A full-page screenshot is left in .tmp/ (git-ignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, MODEL, sloRunArgs, tempDir } from './fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTEFACTS = path.join(ROOT, '.tmp');
const have = existsSync(CHROMIUM);
if (!have) console.warn(`skipping the headless Chromium report test: ${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`);

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const EXPECTED = [
  'cdf-ttft', 'tail-ttft', 'cdf-itl', 'tail-itl', 'cdf-e2e', 'tail-e2e', 'latency-ttft-over-time', 'latency-e2e-over-time', 'slo-attainment-over-time', 'instance-queue-depth', 'instance-batch-size', 'instance-kv-gpu-utilization', 'instance-step-time-us',
  'cluster-flow', 'cluster-throughput', 'cluster-load', 'routing-distribution', 'routing-regret', 'events-timeline', 'anomalies-timeline',
];

interface FigureState {
  id: string;
  points: number;
  marks: number;
  width: number;
  height: number;
}

describe.skipIf(!have)('report in headless Chromium', () => {
  it('shows every chart with data, logs no console errors, loads nothing, and leaves a screenshot', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'report.html');
    const r = await cli([...sloRunArgs(dir), '--report', file]);
    expect(r.code, r.err).toBe(0);

    const { chromium } = await import('playwright-core');
    const profile = mkdtempSync(path.join(tmpdir(), 'blis-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    const requests: string[] = [];
    try {
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        requests.push(url);
        if (url.startsWith('file://')) await route.continue();
        else await route.abort();
      });
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`file://${file}`, { waitUntil: 'load' });
      // In the page (a string: the test project has no DOM types).
      const figures = await page.evaluate<FigureState[]>(`[...document.querySelectorAll('figure.chart')].map((f) => {
        const box = f.querySelector('svg')?.getBoundingClientRect();
        const marks = [...f.querySelectorAll('g.role-mark > *')].filter((el) => el.tagName !== 'path' || (el.getAttribute('d') ?? '') !== '').length;
        return { id: f.getAttribute('data-chart') ?? '', points: Number(f.getAttribute('data-points')), marks, width: box?.width ?? 0, height: box?.height ?? 0 };
      })`);
      expect(figures.map((f) => f.id)).toEqual(EXPECTED);
      for (const f of figures) {
        expect(f.points, f.id).toBeGreaterThan(0);
        expect(f.marks, f.id).toBeGreaterThan(0);
        expect(f.width, f.id).toBeGreaterThan(100);
        expect(f.height, f.id).toBeGreaterThan(100);
      }
      expect(await page.evaluate("document.querySelectorAll('script').length")).toBe(0);
      mkdirSync(ARTEFACTS, { recursive: true });
      const shot = path.join(ARTEFACTS, 'report-chromium.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
    expect(errors).toEqual([]);
    expect(requests).toEqual([`file://${file}`]);
  }, 180_000);

  it('a 24 s P/D run: every time axis ends with the run (not at its stale timeouts near 320 s); screenshot left', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'pd.html');
    const r = await cli(['run', '--model', MODEL, '--num-instances', '6', '--prefill-instances', '2', '--decode-instances', '4', '--decode-tp', '2', '--pd-decider', 'always', '--rate', '20', '--num-requests', '400', '--prompt-tokens', '2048', '--output-tokens', '256', '--report', file]);
    expect(r.code, r.err).toBe(0);
    const end = (JSON.parse(r.out) as { simulation_metrics: { vllm_estimated_duration_s: number } }).simulation_metrics.vllm_estimated_duration_s;
    expect(end).toBeLessThan(30);
    const { chromium } = await import('playwright-core');
    const profile = mkdtempSync(path.join(tmpdir(), 'blis-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1400, height: 1000 } });
    try {
      const page = await context.newPage();
      await page.goto(`file://${file}`, { waitUntil: 'load' });
      // Vega labels each axis for screen readers: "X-axis titled 'simulated time (s)' ... with values from 0 to N".
      const labels = await page.evaluate<string[]>(`[...document.querySelectorAll('[aria-label^="X-axis titled \\'simulated time"]')].map((e) => e.getAttribute('aria-label'))`);
      expect(labels.length).toBeGreaterThanOrEqual(8);
      for (const l of labels) {
        const to = Number(/values from 0 to ([\d,.]+)/.exec(l)?.[1]?.replace(/,/g, ''));
        expect(to, l).toBeGreaterThanOrEqual(Math.floor(end));
        expect(to, l).toBeLessThanOrEqual(Math.ceil(end) + 1);
      }
      const ids = await page.evaluate<string[]>("[...document.querySelectorAll('figure.chart')].map((f) => f.getAttribute('data-chart'))");
      for (const id of ['replicas-timeline', 'pd-timeline', 'latency-ttft-over-time', 'tail-ttft']) expect(ids).toContain(id);
      mkdirSync(ARTEFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTEFACTS, 'report-chromium-pd.png'), fullPage: true });
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }, 180_000);
});
