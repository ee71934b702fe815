/**
 * The floor of an OpenAI front end written in Node, for `pnpm bench:openai`: streaming
 * `/v1/completions` and nothing else, upstream through the overhead benchmark's socket probe
 * (HTTP/2 frames read in JavaScript, no HPACK, no flow control, no errors), downstream through
 * node:http with the same write policy as `trtllm-openai` (one write per response per event-loop
 * round). No validation, no usage, no stop sequences, no cancellation: what any Node server on
 * node:http must spend per chunk, whatever its code, so `trtllm-openai`'s distance to it is what its
 * own code costs and the distance from it to openai_trtllm is what Node and node:http cost.
 *
 * Usage: node --import tsx bench/openai/node-floor.ts --triton <triton gRPC URL>; prints the address it serves.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, type CompletionBody, floorAnswer } from './floor.js';

const answer = floorAnswer('node-floor.ts');

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as CompletionBody;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    answer(body, {
      // node:http frames each write as a chunk of its own (four socket writes, one writev).
      write: (text) => res.write(text),
      end: (text) => res.end(text),
      fail: () => res.destroy(),
    });
  });
});

server.listen(0, '127.0.0.1', () => announce('node floor', (server.address() as AddressInfo).port));
