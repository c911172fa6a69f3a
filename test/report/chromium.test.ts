/**
 * Opens the report of a 4-instance run with decision traces and SLO classes in headless Chromium (Debian's
 * `chromium`, driven by playwright-core; never a downloaded browser): every chart is there with data, the
 * page logs no error and asks the network for nothing. A full-page screenshot is left in .tmp/ (git-ignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sloRunArgs, tempDir } from './fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTEFACTS = path.join(ROOT, '.tmp');
const have = existsSync(CHROMIUM);
if (!have) console.warn(`skipping the headless Chromium report test: ${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`);

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const EXPECTED = [
  'cdf-ttft', 'cdf-itl', 'cdf-e2e', 'instance-queue-depth', 'instance-batch-size', 'instance-kv-gpu-utilization', 'instance-step-time-us',
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
});
