import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { transportFromUrl } from '@trtllm/openai';
import { TritonLlm } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAscii, seedWhere } from './expected.js';
import { type Stack, startStack } from './stack.js';

// The server frames a stream's HTTP chunks itself once its headers are out (src/sse.ts). These tests
// read the bytes on the wire with a decoder of their own, so a wrong chunk size, a response written
// out of turn or a bypassed middleware shows as a broken or different body.

/** An HTTP/1.1 response parsed from raw bytes: its head and its chunked body, chunk by chunk. */
interface RawResponse {
  readonly head: string;
  readonly chunks: readonly Buffer[];
  readonly body: string;
}

/** Splits the bytes of responses sent one after another on a connection; every body must be chunked. */
function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) throw new Error(`incomplete head at byte ${at}`);
    const head = bytes.toString('latin1', at, headEnd);
    if (!/\r\ntransfer-encoding: chunked/i.test(head)) throw new Error(`not chunked: ${head}`);
    at = headEnd + 4;
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', at);
      if (lineEnd < 0) throw new Error(`incomplete chunk size at byte ${at}`);
      const size = Number.parseInt(bytes.toString('latin1', at, lineEnd), 16);
      if (!Number.isInteger(size)) throw new Error(`bad chunk size at byte ${at}`);
      at = lineEnd + 2;
      if (size === 0) {
        if (bytes.toString('latin1', at, at + 2) !== '\r\n')
          throw new Error('no blank line after the last chunk');
        at += 2;
        break;
      }
      chunks.push(bytes.subarray(at, at + size));
      if (bytes.toString('latin1', at + size, at + size + 2) !== '\r\n') {
        throw new Error(`chunk of ${size} bytes at ${at} is not followed by CRLF: its size is wrong`);
      }
      at += size + 2;
    }
    responses.push({ head, chunks, body: Buffer.concat(chunks).toString('utf8') });
  }
  return responses;
}

/** Sends `requests` back to back on one connection (pipelined) and returns every byte answered. */
function exchange(port: number, requests: readonly string[], pauseMs = 0): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => {
      parts.push(part);
      // A slow reader: stop reading after the first bytes, and let the server's writes back up.
      if (pauseMs > 0 && parts.length === 1) {
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    socket.on('end', () => resolve(Buffer.concat(parts)));
    socket.on('error', reject);
    socket.write(requests.join(''));
  });
}

function completionRequest(body: object, last: boolean): string {
  const json = JSON.stringify(body);
  return (
    'POST /v1/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n' +
    `content-length: ${Buffer.byteLength(json)}\r\n${last ? 'connection: close\r\n' : ''}\r\n${json}`
  );
}

/** The text of a completion stream's events, with the id and time left out: what two answers share. */
function eventTexts(body: string): string[] {
  expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => (JSON.parse(e.slice(6)) as { choices: { text: string }[] }).choices[0]!.text);
}

describe('SSE chunks on the wire', () => {
  // A token every 4 ms, so every stream spans many writes even when a busy machine stalls the event
  // loop for a few ms (at 1 ms, CI once saw an 8-token stream leave in 4 writes); and one at full speed.
  let paced: Stack;
  let fast: Stack;
  const portOf = (stack: Stack) => Number(new URL(stack.baseURL).port);
  beforeAll(async () => {
    paced = await startStack({ fake: { itlMs: 4 } });
    fast = await startStack({ fake: { itlMs: 0 } });
  });
  afterAll(async () => {
    await paced.close();
    await fast.close();
  });

  const prompt = 'Tell me about GPUs';
  const request = (seed: number, maxTokens = 24) => ({
    model: 'ensemble',
    prompt,
    max_tokens: maxTokens,
    seed,
    stream: true,
  });

  test('pipelined streams with multi-byte text come back whole, in order, with exact chunk sizes', async () => {
    const wide = seedWhere(prompt, 24, (t) => !isAscii(t));
    const plain = seedWhere(prompt, 8, isAscii);
    // Each alone first: what the same requests stream on a connection of their own.
    const first = completionRequest(request(wide), false);
    const second = completionRequest(request(plain, 8), true);
    const [alone1] = parseResponses(
      await exchange(portOf(paced), [first.replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n')]),
    );
    const [alone2] = parseResponses(await exchange(portOf(paced), [second]));
    const both = parseResponses(await exchange(portOf(paced), [first, second]));
    expect(both).toHaveLength(2);
    expect(eventTexts(both[0]!.body)).toEqual(eventTexts(alone1!.body));
    expect(eventTexts(both[1]!.body)).toEqual(eventTexts(alone2!.body));
    // Multi-byte characters: a chunk size counted in UTF-16 units would be short.
    expect(isAscii(eventTexts(alone1!.body).join(''))).toBe(false);
    // Many chunks per response. The first's writes after its first are the ones the writer frames
    // itself; the second's are node:http's, queued until the first ends, each still a chunk.
    expect(both[0]!.chunks.length).toBeGreaterThan(4);
    expect(both[1]!.chunks.length).toBeGreaterThan(2);
  });

  /** The data events of a raw body, read as strict UTF-8: bytes of a character cut or counted twice throw. */
  const strictEvents = (r: RawResponse) =>
    new TextDecoder('utf-8', { fatal: true })
      .decode(Buffer.concat(r.chunks))
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as { choices?: { text: string }[]; error?: { message: string } });

  test('non-ASCII text in the echoed prompt, the tokens and the log-prob events leaves as the UTF-8 the SDK read', async () => {
    // Streamed events go out as UTF-8 bytes made where their text is made (src/sse.ts): the echoed
    // prompt (the opening), a token spliced into its chunk's template, and an event with log probs
    // each take their own path there. The oracle is the SDK reading the same generation directly.
    const wide = 'Zürich 北京 — naïve ☃ 😀';
    const seed = seedWhere(wide, 24, (t) => !isAscii(t));
    const llm = new TritonLlm({
      transport: transportFromUrl(paced.fake.grpcUrl.replace(/^http:/, 'grpc:')),
      model: 'ensemble',
    });
    const sdkTexts: string[] = [];
    for await (const c of llm.stream({ prompt: wide, maxTokens: 24, seed })) {
      if (!c.done && c.text !== '') sdkTexts.push(c.text);
    }
    expect(isAscii(sdkTexts.join(''))).toBe(false);
    // Echo: the opening event, then the tokens spliced into their template.
    const echoed = { model: 'ensemble', prompt: wide, max_tokens: 24, seed, echo: true, stream: true };
    const [r1] = parseResponses(await exchange(portOf(paced), [completionRequest(echoed, true)]));
    const texts = strictEvents(r1!).map((e) => e.choices![0]!.text);
    expect(texts[0]).toBe(wide);
    // The last event is the finish, with no text.
    expect(texts.slice(1, -1)).toEqual(sdkTexts);
    // Log probs (which OpenAI does not combine with echo): each token's event is serialized whole.
    const withLogProbs = { model: 'ensemble', prompt: wide, max_tokens: 24, seed, logprobs: 1, stream: true };
    const [r2] = parseResponses(await exchange(portOf(paced), [completionRequest(withLogProbs, true)]));
    const events = strictEvents(r2!).slice(0, -1) as {
      choices: { text: string; logprobs: { tokens: string[] } }[];
    }[];
    expect(events.map((e) => e.choices[0]!.text)).toEqual(sdkTexts);
    expect(events.flatMap((e) => e.choices[0]!.logprobs.tokens)).toEqual(sdkTexts);
  });

  test('an error event after a non-ASCII echoed prompt is whole UTF-8 and keeps the three tokens before it', async () => {
    paced.fake.setFaults({ errorAfterTokens: 3 });
    try {
      const wide = 'Zürich 北京 😀';
      const body = { model: 'ensemble', prompt: wide, max_tokens: 12, echo: true, stream: true };
      const [r] = parseResponses(await exchange(portOf(paced), [completionRequest(body, true)]));
      const events = strictEvents(r!);
      expect(events[0]!.choices![0]!.text).toBe(wide);
      expect(events.slice(1, -1)).toHaveLength(3);
      expect(events.at(-1)!.error!.message).toMatch(/^POST \/v1\/completions failed: /);
    } finally {
      paced.fake.setFaults(undefined);
    }
  });

  test('a reader that stops reading for a while still gets every event of a long stream', async () => {
    // About 4 MB at full speed: more than loopback buffers, so the server's socket fills and its
    // writes wait for 'drain' (checked by hand on this machine; buffer sizes vary with the kernel).
    const ask = [completionRequest(request(3, 20_000), true)];
    const [alone] = parseResponses(await exchange(portOf(fast), ask));
    const [slow] = parseResponses(await exchange(portOf(fast), ask, 500));
    const texts = eventTexts(slow!.body);
    // 20,000 tokens and the finish event.
    expect(texts).toHaveLength(20_001);
    expect(texts).toEqual(eventTexts(alone!.body));
  });

  test('a client that asks to close the connection gets it closed after the stream', async () => {
    const [r] = parseResponses(await exchange(portOf(paced), [completionRequest(request(1, 4), true)]));
    expect(r!.head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(eventTexts(r!.body)).toHaveLength(5);
  });

  test('mounted in another server, every byte goes through that server’s res.write and res.end', async () => {
    const seen: Buffer[] = [];
    const bytesOf = (part: string | Uint8Array): Buffer =>
      typeof part === 'string' ? Buffer.from(part) : Buffer.from(part);
    const outer: Server = createServer((req, res) => {
      // A middleware that wraps the response's writes, as compression does (passing no encoding on).
      const write = res.write.bind(res) as (part: string | Uint8Array) => boolean;
      const end = res.end.bind(res) as (part?: string | Uint8Array) => typeof res;
      res.write = ((part: string | Uint8Array) => {
        seen.push(bytesOf(part));
        return write(part);
      }) as typeof res.write;
      res.end = ((part?: string | Uint8Array) => {
        if (typeof part === 'string' || part instanceof Uint8Array) seen.push(bytesOf(part));
        return end(part);
      }) as typeof res.end;
      paced.handler(req, res);
    });
    await new Promise<void>((resolve) => outer.listen(0, '127.0.0.1', resolve));
    try {
      const { port: outerPort } = outer.address() as AddressInfo;
      const [r] = parseResponses(await exchange(outerPort, [completionRequest(request(5), true)]));
      expect(r!.chunks.length).toBeGreaterThan(4);
      expect(Buffer.concat(seen).toString('utf8')).toBe(r!.body);
    } finally {
      await new Promise((resolve) => outer.close(resolve));
    }
  });
});
