// A Cloudflare Worker with `nodejs_compat` that runs the smoke over @trtllm/grpc, whose HTTP/2
// engine speaks over `node:net` (workerd maps it onto its TCP sockets): GET /?grpc=<fake's gRPC
// URL>&tag=<id prefix> answers with the SmokeReport.
import { grpcTransport } from '@trtllm/grpc';
import { smoke } from './smoke.js';

export default {
  async fetch(request: Request): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const transport = grpcTransport({ baseUrl: query.get('grpc') ?? '' });
    try {
      return Response.json(await smoke('grpc', transport, `${query.get('tag') ?? 'worker'}-grpc-abort`));
    } catch (err) {
      return Response.json({ failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    } finally {
      await transport.close();
    }
  },
};
