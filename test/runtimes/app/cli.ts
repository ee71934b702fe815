// Bun and Deno run this file: `<runtime> cli.ts <grpcUrl> <httpUrl>`; it prints one JSON line of
// SmokeReports, or {"failure": ...}.
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type SmokeReport, smoke } from './smoke.js';

// Deno has no `process.argv` of the script's own; each runtime names its arguments its way.
const deno = (globalThis as { Deno?: { args: string[]; version: { deno: string } } }).Deno;
const bun = (globalThis as { Bun?: { version: string } }).Bun;
const args = deno !== undefined ? deno.args : process.argv.slice(2);
const [grpcUrl = '', httpUrl = '', tag = 'runtime'] = args;
const runtime =
  deno !== undefined ? `deno ${deno.version.deno}` : bun !== undefined ? `bun ${bun.version}` : 'node';

const reports: SmokeReport[] = [];
let failure: string | undefined;
const grpc = grpcTransport({ baseUrl: grpcUrl });
const http = httpTransport({ baseUrl: httpUrl });
try {
  reports.push(await smoke('grpc', grpc, `${tag}-grpc-abort`));
  reports.push(await smoke('http', http, `${tag}-http-abort`));
} catch (err) {
  failure = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
} finally {
  await Promise.all([grpc.close(), http.close()]);
}
console.log(JSON.stringify({ runtime, reports, ...(failure !== undefined ? { failure } : {}) }));
