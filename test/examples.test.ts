import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

// Every example runs against the embedded fake Triton, as a user would run it, and must say what
// the README promises.
const EXAMPLES: readonly [string, RegExp][] = [
  ['demo.ts', /the fake Triton logged 'cancelled'/],
  ['generate.ts', /\[grpc\].*\n.*finish=length[\s\S]*\[http\]/],
  ['streaming.ts', /finish=length tokens=48/],
  [
    'stop-early.ts',
    /raw tensorrt_llm, stop\(\).*finish=stopped.*in_band_stop.*true[\s\S]*AbortSignal.*finish=cancelled.*grpc_cancel.*true[\s\S]*ensemble.*finish=cancelled.*server stops generating: false/,
  ],
  ['words.ts', /stop 'study': .*\(finish=stop\)/],
  ['sequences.ts', /beam 2: [\s\S]*sequence 1: /],
  [
    'batch.ts',
    /ensemble_unary: 1 request\(s\)[\s\S]*"Machine learning is" -> [\s\S]*ensemble: 3 request\(s\)/,
  ],
  ['raw-tokenizer.ts', /finish=stop, replacement characters: false/],
  ['bls-accumulate.ts', /tensorrt_llm_bls: .*\(lossy chunks: 0\)\nensemble: .*\(lossy chunks: [1-9]/],
  ['introspection.ts', /flavor=ensemble backend=2026 decoupled=true maxBatchSize=64/],
  ['http-service.ts', /Triton cancelled request \d+ after \d+ of 5000 tokens/],
  ['langchain.ts', /finish=length output tokens=14[\s\S]*aborted after \d+ .*generating: true/],
  ['ai-sdk.ts', /tokens=32 request=\d+\nOutput\.object: \{"topic"[\s\S]*grpc_cancel server stops generating/],
  [
    'agent-ai-sdk.ts',
    /step 1: finish=tool-calls calls=\[get_weather\(\{"city":"Paris"\}\)\]\nstep 2: finish=stop[\s\S]*answer: It is sunny and 21 C in Paris\.\nstreamed: tool-input-start > tool-input-delta > tool-input-end > tool-call/,
  ],
  [
    'agent-langchain.ts',
    /ai: get_weather\(\{"city":"Paris"\}\)\ntool: Paris: sunny, 21 C\nai: It is sunny and 21 C in Paris\.\nstreamed: \d+ tool_call_chunks -> \[\["get_weather",\{"city":"Zürich"\}\]\]/,
  ],
  ['telemetry.ts', /text_completion tensorrt_llm_bls[\s\S]*output_tokens': 16[\s\S]*time_per_output_chunk/],
];

describe('examples', () => {
  it.each(EXAMPLES)(
    '%s runs and prints what it promises',
    async (file, expected) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${file}`], {
        cwd: root,
        timeout: 60_000,
        env: { ...process.env, TRITON_GRPC_URL: '', TRITON_HTTP_URL: '' },
      });
      expect(stdout).toMatch(expected);
    },
    90_000,
  );
});
