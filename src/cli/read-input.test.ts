/**
 * The CLI's bounded input reader: devices, pipes, directories and non-text fail at once with one clear line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';
import { firstInvalidUtf8, readInputFile } from './read-input.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function message(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('readInputFile', () => {
  it('reads at most cap + 1 bytes of an endless device', () => {
    const t = performance.now();
    expect(message(() => readInputFile('/dev/zero', '--workload-spec', 1 << 20))).toBe('--workload-spec: /dev/zero: the input is larger than 1 MiB; blis-ts refuses inputs this large — split it or pass a smaller file');
    expect(performance.now() - t).toBeLessThan(10_000);
  });

  it('refuses an oversized regular file before reading it', () => {
    const p = path.join(dir, 'big.yaml');
    writeFileSync(p, 'a'.repeat(3000));
    expect(message(() => readInputFile(p, '--policy-config', 1024))).toMatch(/^--policy-config: .*big\.yaml: the file is larger than 1 KiB \(2\.9 KiB\)/);
  });

  it('fails at once on a named pipe nobody writes to, a directory or a missing file', () => {
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const t = performance.now();
    expect(message(() => readInputFile(fifo, '--workload-spec'))).toMatch(/^--workload-spec: .*pipe: is a named pipe that sent nothing \(no writer\?\)/);
    expect(performance.now() - t).toBeLessThan(10_000);
    expect(message(() => readInputFile(dir, '--trace-data'))).toMatch(/^--trace-data: .*: is a directory; pass a file$/);
    expect(message(() => readInputFile(path.join(dir, 'nope.yaml'), '--trace-header'))).toMatch(/^--trace-header: cannot read .*nope\.yaml: no such file; check the path$/);
  });

  it('refuses binary data and invalid UTF-8 with the position, not the bytes', () => {
    const bin = path.join(dir, 'x.bin');
    writeFileSync(bin, Buffer.from('a: 1\nb: \u0000\u0001\u0002'));
    expect(message(() => readInputFile(bin, '--workload-spec'))).toMatch(/holds binary data \(a NUL byte at line 2, byte 9\)/);
    const latin = path.join(dir, 'latin1.yaml');
    writeFileSync(latin, Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
    expect(message(() => readInputFile(latin, '--workload-spec'))).toMatch(/is not UTF-8 text \(an invalid byte at line 1, byte 4\)/);
  });

  it('reads UTF-8 text, a byte-order mark included', () => {
    const p = path.join(dir, 'ok.yaml');
    writeFileSync(p, '\ufeffname: café ☕ 𝄞\n');
    expect(readInputFile(p, '--x')).toBe('\ufeffname: café ☕ 𝄞\n');
  });

  it('firstInvalidUtf8 finds overlong forms, surrogates and truncated sequences', () => {
    expect(firstInvalidUtf8(Buffer.from('ok ☕ 𝄞'))).toBe(-1);
    expect(firstInvalidUtf8(Uint8Array.from([0x41, 0xc0, 0x80]))).toBe(1);
    expect(firstInvalidUtf8(Uint8Array.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(firstInvalidUtf8(Uint8Array.from([0x41, 0xe2, 0x98]))).toBe(1);
    expect(firstInvalidUtf8(Uint8Array.from([0xf4, 0x90, 0x80, 0x80]))).toBe(0);
  });
});

describe('the CLI with unreadable inputs', () => {
  it('--workload-spec /dev/zero is one error line, at once', async () => {
    const errors: string[] = [];
    let out = '';
    const t = performance.now();
    const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--workload-spec', '/dev/zero'], { stdout: (s) => void (out += s), warn: () => undefined, error: (s) => void errors.push(s) });
    expect(performance.now() - t).toBeLessThan(10_000);
    expect([code, out, errors]).toEqual([2, '', ['--workload-spec: /dev/zero: the input is larger than 64 MiB; blis-ts refuses inputs this large — split it or pass a smaller file']]);
  });
});
