// Cold-start child of bench:overhead (see ../cold-start.ts): the least a grpc-js user writes, as
// ../variants/grpc-js-bare.ts does (proto-loader over our proto/, one ModelStreamInfer call, raw
// input contents), run by plain `node`. Prints one JSON line at its first token, then exits.
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const job = JSON.parse(process.argv[2]);
const definition = loadSync('inference/grpc_service.proto', {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  includeDirs: [job.protoDir],
});
const { inference } = loadPackageDefinition(definition);
const client = new inference.GRPCInferenceService(new URL(job.grpcUrl).host, credentials.createInsecure());

/** A BYTES tensor of one element: its 4-byte little-endian length, then its bytes. */
function bytesTensor(text) {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(4 + bytes.length);
  out.writeUInt32LE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
}
const int32 = Buffer.alloc(4);
int32.writeInt32LE(job.maxTokens, 0);

const call = client.ModelStreamInfer();
call.on('data', (message) => {
  if (message.error_message !== '') throw new Error(message.error_message);
  const response = message.infer_response;
  const index = response?.outputs.findIndex((o) => o.name === 'text_output') ?? -1;
  if (index >= 0 && response.raw_output_contents[index].length > 4) {
    const cpu = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
    process.exit(0);
  }
});
call.on('error', (err) => {
  throw err;
});
call.write({
  model_name: 'ensemble',
  id: '1',
  parameters: { triton_enable_empty_final_response: { bool_param: true } },
  inputs: [
    { name: 'text_input', datatype: 'BYTES', shape: [1, 1] },
    { name: 'max_tokens', datatype: 'INT32', shape: [1, 1] },
    { name: 'stream', datatype: 'BOOL', shape: [1, 1] },
  ],
  raw_input_contents: [bytesTensor(job.prompt), int32, Buffer.of(1)],
});
