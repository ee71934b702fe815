// Cold-start child of bench:overhead (see ../cold-start.ts): a user's first script over HTTP, run
// by plain `node` from a project that installed the built packages. Prints one JSON line at its
// first token, then exits.

import { httpTransport } from '@trtllm/http';
import { TritonLlm } from '@trtllm/sdk';

const job = JSON.parse(process.argv[2]);
const llm = new TritonLlm({ transport: httpTransport({ baseUrl: job.httpUrl }), model: 'ensemble' });
for await (const chunk of llm.stream({ prompt: job.prompt, maxTokens: job.maxTokens })) {
  if (!chunk.done && chunk.text.length > 0) {
    const cpu = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
    // At once, as the timing ends here: an ensemble cancelled by `break` keeps generating on the
    // server and the SDK says so on stderr, which is not what is measured.
    process.exit(0);
  }
}
throw new Error('the stream ended without a token');
