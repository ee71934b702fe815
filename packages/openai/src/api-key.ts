import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { TritonLlmError } from '@trtllm/sdk';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Checks `Authorization: Bearer <key>`. Both sides are hashed first so that the comparison takes
 * the same time whatever the key's length and however many leading bytes match.
 */
export function apiKeyCheck(expected: string): (headers: IncomingHttpHeaders) => void {
  const want = digest(expected);
  return (headers) => {
    const header = headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    const given = digest(match?.[1] ?? '');
    // Hash and compare even without a header, so a missing key costs what a wrong one does.
    if (!timingSafeEqual(given, want) || match === null) {
      throw new TritonLlmError(
        'unauthenticated',
        match === null
          ? 'missing API key: send it as "Authorization: Bearer <key>"'
          : 'incorrect API key provided',
      );
    }
  };
}
