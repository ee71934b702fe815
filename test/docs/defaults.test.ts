import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY } from '../../packages/core/src/retry.js';
import { DEFAULT_MAX_RECEIVE_BYTES } from '../../packages/grpc/src/transport/endpoint.js';
import { DEFAULT_MULTIPLEX_CALLS } from '../../packages/grpc/src/transport/shared-calls.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_SILENCE_TIMEOUT_MS } from '../../packages/http/src/options.js';
import { type DefaultMark, defaultMarks, markdownFiles, quotedValue, root } from './markdown.js';

// Defaults quoted in the docs are marked `<!-- default:NAME -->VALUE` and compared here with the
// code's own values, so prose cannot drift from the code again (the README once said 30 s for a
// keepalive of 330 s). The value of a default is read from the exported constant where there is one,
// else from the source line that sets it: the test names the file when a refactor moves it.

/** The number that `pattern`'s first group captures in a source file: digits, `_` and `*` only. */
function fromSource(file: string, pattern: RegExp): number {
  const text = readFileSync(join(root, file), 'utf8');
  const expr = pattern.exec(text)?.[1];
  if (expr === undefined)
    throw new Error(`${file} no longer matches ${pattern}: update test/docs/defaults.test.ts`);
  if (!/^[\d_\s*]+$/.test(expr)) throw new Error(`${file}: '${expr}' is not a plain number`);
  return expr
    .split('*')
    .map((n) => Number(n.trim().replace(/_/g, '')))
    .reduce((a, b) => a * b, 1);
}

/** The text that `pattern`'s first group captures in a source file. */
function textFromSource(file: string, pattern: RegExp): string {
  const found = pattern.exec(readFileSync(join(root, file), 'utf8'))?.[1];
  if (found === undefined)
    throw new Error(`${file} no longer matches ${pattern}: update test/docs/defaults.test.ts`);
  return found;
}

const GRPC = 'packages/grpc/src/transport/endpoint.ts';
const REPLICAS = 'packages/core/src/replicas/replica-transport.ts';
const replicaDefault = (name: string): number =>
  fromSource(REPLICAS, new RegExp(`const DEFAULTS = \\{[^}]*\\b${name}: ([\\d_]+),`));
const OPENAI_SERVER = 'packages/openai/src/server.ts';
const OPENAI_CLI = 'packages/openai/src/cli.ts';

/**
 * Every default the docs may quote, with the code's value: a number in milliseconds, bytes or a
 * count, or a string for the ones that are not numbers. Each must be quoted somewhere.
 */
const DEFAULTS: Record<string, () => number | string> = {
  'grpc.keepaliveMs': () => fromSource(GRPC, /const DEFAULT_KEEPALIVE_MS = ([\d_]+);/),
  'grpc.keepaliveTimeoutMs': () => fromSource(GRPC, /const DEFAULT_KEEPALIVE_TIMEOUT_MS = ([\d_]+);/),
  'grpc.maxConnections': () => fromSource(GRPC, /const DEFAULT_MAX_CONNECTIONS = ([\d_]+);/),
  'grpc.maxReceiveMessageBytes': () => DEFAULT_MAX_RECEIVE_BYTES,
  'grpc.multiplexCalls': () => DEFAULT_MULTIPLEX_CALLS,
  'http.maxResponseBytes': () => DEFAULT_MAX_RESPONSE_BYTES,
  'http.silenceTimeoutMs': () => DEFAULT_SILENCE_TIMEOUT_MS,
  'grpc.tls.rejectUnauthorized': () => {
    // The transport passes the option to node:tls only when it is given, so node:tls's own default
    // holds when it is left out: certificates are verified.
    textFromSource(GRPC, /(\.\.\.\(tls\.rejectUnauthorized !== undefined \? \{ rejectUnauthorized)/);
    return 'true';
  },
  'retry.attempts': () => DEFAULT_RETRY.attempts,
  'retry.initialDelayMs': () => DEFAULT_RETRY.initialDelayMs,
  'retry.maxDelayMs': () => DEFAULT_RETRY.maxDelayMs,
  'retry.budgetMs': () => DEFAULT_RETRY.budgetMs,
  'replicas.healthIntervalMs': () => replicaDefault('healthIntervalMs'),
  'replicas.healthTimeoutMs': () => replicaDefault('healthTimeoutMs'),
  'replicas.ejectAfterFailures': () => replicaDefault('ejectAfterFailures'),
  'replicas.failoverAttempts': () => replicaDefault('failoverAttempts'),
  'replicas.refreshIntervalMs': () => replicaDefault('refreshIntervalMs'),
  'openai.port': () => fromSource(OPENAI_CLI, /integerFlag\('port', values\.port, ([\d_]+)\)/),
  'openai.host': () => textFromSource(OPENAI_SERVER, /async listen\(port, host = '([^']+)'\)/),
  'openai.defaultMaxTokens': () => fromSource(OPENAI_SERVER, /options\.defaultMaxTokens \?\? ([\d_]+);/),
  'openai.cli.defaultMaxTokens': () =>
    fromSource(OPENAI_CLI, /integerFlag\('default-max-tokens', values\['default-max-tokens'\], ([\d_]+)\)/),
  'openai.maxBodyBytes': () => fromSource(OPENAI_SERVER, /options\.maxBodyBytes \?\? ([\d_ *]+);/),
  'openai.tritonWaitMs': () => fromSource(OPENAI_SERVER, /options\.tritonWaitMs \?\? ([\d_]+);/),
  // The flag is in seconds.
  'openai.cli.tritonWait': () => fromSource(OPENAI_CLI, /values\['triton-wait'\] \?\? '([\d_]+)'/) * 1000,
};

const marks: DefaultMark[] = markdownFiles().flatMap((file) => defaultMarks(file));

/** What the mark quotes, in the code's terms. */
function quoted(mark: DefaultMark): number | string {
  return typeof DEFAULTS[mark.name]?.() === 'string' ? mark.quoted : quotedValue(mark.quoted);
}

describe('defaults quoted in the docs', () => {
  it('name only defaults this test knows', () => {
    const unknown = marks.filter((m) => !(m.name in DEFAULTS)).map((m) => `${m.file}:${m.line}: ${m.name}`);
    expect(unknown).toEqual([]);
  });

  it('are each quoted at least once', () => {
    const quotedNames = new Set(marks.map((m) => m.name));
    expect(Object.keys(DEFAULTS).filter((name) => !quotedNames.has(name))).toEqual([]);
  });

  it('say what the code does', () => {
    const wrong = marks
      .filter((m) => m.name in DEFAULTS)
      .map((m) => ({ at: `${m.file}:${m.line}`, name: m.name, docs: quoted(m), code: DEFAULTS[m.name]!() }))
      .filter((m) => m.docs !== m.code);
    expect(wrong).toEqual([]);
  });

  it('read units the way a reader does', () => {
    expect(quotedValue('330 s')).toBe(330_000);
    expect(quotedValue('5.5 min')).toBe(330_000);
    expect(quotedValue('64 MiB')).toBe(64 * 1024 * 1024);
    expect(quotedValue('1,024')).toBe(1024);
    expect(quotedValue('3 attempts')).toBe(3);
    expect(() => quotedValue('30 seconds')).toThrow(/unknown unit/);
  });
});
