// A Cloudflare Worker (no compatibility flags) that runs the smoke over @trtllm/http, which uses the
// Worker's own fetch: GET /?http=<fake's HTTP URL>&tag=<id prefix> answers with the SmokeReport.
import { httpTransport } from '@trtllm/http';
import { smoke } from './smoke.js';

export default {
  async fetch(request: Request): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const transport = httpTransport({ baseUrl: query.get('http') ?? '' });
    try {
      return Response.json(await smoke('http', transport, `${query.get('tag') ?? 'worker'}-http-abort`));
    } catch (err) {
      return Response.json({ failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    } finally {
      await transport.close();
    }
  },
};
