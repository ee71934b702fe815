import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidArgument, TritonLlmError } from '@trtllm/sdk';
import { toOpenAiError } from './api-error.js';

/**
 * Reads a JSON object body, refusing bodies over `limit` bytes before buffering them whole. The
 * content type is not checked: `curl -d` sends form encoding for what is JSON.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) throw invalidArgument('body', `${size} bytes`, `must be at most ${limit} bytes`);
    parts.push(part);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch (err) {
    throw new TritonLlmError('invalid_argument', `body: is not valid JSON (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArgument('body', body, 'must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** Writes a complete JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Writes an error as OpenAI's error JSON with its HTTP status. */
export function sendError(res: ServerResponse, err: unknown): void {
  const { status, body } = toOpenAiError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, body);
}
