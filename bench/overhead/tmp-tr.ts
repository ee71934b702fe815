import { driveLoad } from '@trtllm/bench';
import { grpcTransport } from '@trtllm/grpc';
import { createTensor } from '@trtllm/sdk';
import { PROMPTS } from './config.js';
const [, , name, grpcUrl, , conc, blocks, per] = process.argv;
const t = grpcTransport({ baseUrl: grpcUrl!, ...(name === 'mux' ? { multiplex: true } : {}) });
let id = 0;
const line: string[] = [];
for (let b = 0; b < Number(blocks); b++) {
  const c0 = process.cpuUsage(); let tokens = 0;
  await driveLoad({ concurrency: Number(conc), requests: Number(per) }, async () => {
    const n = id++;
    const s = t.stream({ model: 'ensemble', id: String(n), inputs: [createTensor('text_input', 'BYTES', [1, 1], [PROMPTS[n % PROMPTS.length]!]), createTensor('max_tokens', 'INT32', [1, 1], [32]), createTensor('stream', 'BOOL', [1, 1], [true])], parameters: { triton_enable_empty_final_response: true } }, undefined);
    for await (const r of s) if (r.outputs.length > 0) tokens++;
  });
  const c = process.cpuUsage(c0);
  line.push(((c.user + c.system) / tokens).toFixed(2));
}
console.log(name, line.join(' '));
await t.close();
