// Health, readiness, metadata, the deployed config as the client reads it, and statistics.
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlm } from '@trtllm/sdk';
import { server } from './_server.js';

const triton = await server();
const llm = new TritonLlm({ transport: grpcTransport({ baseUrl: triton.grpcUrl }), model: 'ensemble' });
console.log(`live=${await llm.health()} ready=${await llm.ready()} modelReady=${await llm.modelReady()}`);
const meta = await llm.serverMetadata();
console.log(`server ${meta.name} ${meta.version}`);
const schema = await llm.schema();
console.log(
  `flavor=${schema.flavor} backend=${schema.backendVersion} decoupled=${schema.decoupled} maxBatchSize=${schema.maxBatchSize}`,
);
const config = await llm.modelConfig();
console.log(`inputs: ${config.inputs.map((i) => `${i.name}:${i.datatype}`).join(', ')}`);
await llm.generate({ prompt: 'hi', maxTokens: 2 });
const [stats] = await llm.statistics();
console.log(`inference count: ${stats?.inferenceCount}`);
await llm.close();
await triton.close();
