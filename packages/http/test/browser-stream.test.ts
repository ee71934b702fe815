import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';

const CHROMIUM = '/usr/bin/chromium';
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tokens 20 ms apart, so the second stream is still running when the page aborts it.
const fake = useFakeTriton({ itlMs: 20, cors: true });
let page: Server;
let pageUrl = '';

beforeAll(async () => {
  // Bundled from the sources, as a browser app would bundle the package: no Node built-ins allowed.
  const bundle = await build({
    entryPoints: [here('./browser/page.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    alias: {
      '@trtllm/sdk/transport': here('../../core/src/transport-kit.ts'),
      '@trtllm/sdk': here('../../core/src/index.ts'),
    },
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.text ?? '';
  const html =
    '<!doctype html><meta charset="utf-8"><title>@trtllm/http</title><script type="module" src="/page.js"></script>';
  page = createServer((req, res) => {
    const isScript = req.url === '/page.js';
    res.writeHead(200, { 'content-type': isScript ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(isScript ? script : html);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => page?.close(() => resolve()));
});

interface Report {
  readonly texts?: string[];
  readonly finals?: number;
  readonly lastFinal?: boolean;
  readonly abortedAfter?: number;
  readonly abortCode?: string;
  readonly failure?: string;
}

describe('@trtllm/http in a real browser', () => {
  it('streams a completion and aborts a second stream from headless Chromium', {
    timeout: 90_000,
  }, async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install it with 'apt-get update && apt-get install -y chromium'`,
      );
    }
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const tab = await browser.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (err) => errors.push(err.message));
      await tab.goto(`${pageUrl}?triton=${encodeURIComponent(fake().httpUrl)}`);
      await tab.waitForFunction(() => (window as { __report?: unknown }).__report !== undefined, undefined, {
        timeout: 60_000,
      });
      const report = (await tab.evaluate(() => (window as { __report?: unknown }).__report)) as Report;
      expect(errors).toEqual([]);
      expect(report.failure).toBeUndefined();

      const expected = generateTokens(fakeTokenizer.encode('Hello'), { maxTokens: 5 })[0]?.tokens ?? [];
      expect(report.texts).toEqual(expected.map((id) => fakeTokenizer.decode([id])));
      expect(report.finals).toBe(1);
      expect(report.lastFinal).toBe(true);

      expect(report.abortCode).toBe('cancelled');
      expect(report.abortedAfter).toBeGreaterThanOrEqual(2);
      const cancelled = await fake().waitForEvent(
        (e) => e.id === 'browser-abort' && e.event === 'cancelled',
        10_000,
      );
      expect(cancelled.tokens).toBeLessThan(1000);
    } finally {
      await browser.close();
    }
  });
});
