// Runs in the browser: streams a completion and aborts a second one through @trtllm/http, then
// reports what it saw on `window.__report` for the test to read.
import { createTensor, TritonLlmError, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { httpTransport } from '../../src/index.js';

interface Report {
  readonly texts?: string[];
  readonly finals?: number;
  readonly lastFinal?: boolean;
  readonly abortedAfter?: number;
  readonly abortCode?: string;
  readonly tokensBeforeAbort?: number[];
  readonly failure?: string;
}

declare global {
  interface Window {
    __report?: Report;
  }
}

async function run(): Promise<Report> {
  const baseUrl = new URLSearchParams(location.search).get('triton') ?? '';
  const transport = httpTransport({ baseUrl });

  const texts: string[] = [];
  let finals = 0;
  let lastFinal = false;
  const completion = transport.stream({
    model: 'ensemble',
    id: 'browser-stream',
    inputs: [
      createTensor('text_input', 'BYTES', [1, 1], ['Hello']),
      createTensor('max_tokens', 'INT32', [1, 1], [5]),
      createTensor('stream', 'BOOL', [1, 1], [true]),
    ],
  });
  for await (const response of completion) {
    if (response.final) finals += 1;
    lastFinal = response.final;
    for (const t of response.outputs) if (t.name === 'text_output') texts.push(...tensorStrings(t));
  }

  const controller = new AbortController();
  const tokensBeforeAbort: number[] = [];
  let abortCode: string | undefined;
  try {
    const running = transport.stream(
      {
        model: 'tensorrt_llm',
        id: 'browser-abort',
        inputs: [
          createTensor('input_ids', 'INT32', [1, 3], [259, 260, 261]),
          createTensor('input_lengths', 'INT32', [1, 1], [3]),
          createTensor('request_output_len', 'INT32', [1, 1], [1000]),
          createTensor('streaming', 'BOOL', [1, 1], [true]),
        ],
      },
      { signal: controller.signal },
    );
    for await (const response of running) {
      for (const t of response.outputs)
        if (t.name === 'output_ids') tokensBeforeAbort.push(...tensorNumbers(t));
      if (tokensBeforeAbort.length >= 2) controller.abort();
    }
  } catch (err) {
    abortCode = err instanceof TritonLlmError ? err.code : `not a TritonLlmError: ${String(err)}`;
  }
  return {
    texts,
    finals,
    lastFinal,
    abortedAfter: tokensBeforeAbort.length,
    tokensBeforeAbort,
    ...(abortCode !== undefined ? { abortCode } : {}),
  };
}

run().then(
  (report) => {
    window.__report = report;
  },
  (err: unknown) => {
    window.__report = { failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  },
);
