import type { IncomingMessage, ServerResponse } from 'node:http';
import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { toOpenAiError } from './api-error.js';

/**
 * Reads a JSON object body, refusing bodies over `limit` bytes before buffering them whole. The
 * content type is not checked: `curl -d` sends form encoding for what is JSON.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const bytes = await readBody(req, limit);
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
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

/**
 * The request's bytes, read with listeners rather than `for await`: a stream's async iterator
 * costs more per request than a small body's whole read (issue 31).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (part: Buffer): void => {
      size += part.length;
      if (size > limit) {
        finish();
        // The rest is read and dropped, so the 400 still reaches a client that is sending it.
        req.resume();
        reject(invalidArgument('body', `${size} bytes`, `must be at most ${limit} bytes`));
        return;
      }
      parts.push(part);
    };
    const onEnd = (): void => {
      finish();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onError = (err: Error): void => {
      finish();
      reject(err);
    };
    // A client gone before the end: 'close' without 'end' would otherwise leave the read pending.
    const onClose = (): void => {
      finish();
      reject(new TritonLlmError('cancelled', 'the client closed the request before sending its body'));
    };
    const finish = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
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

/** Writes an error as OpenAI's error JSON with its HTTP status (and `headers`, such as a 429's `Retry-After`). */
export function sendError(
  res: ServerResponse,
  err: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const { status, body } = toOpenAiError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, body, headers);
}
