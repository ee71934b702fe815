import { describe, expect, it } from 'vitest';
import { post, useFake } from './support/fake.js';

const h = useFake({ cors: true });

describe('CORS', () => {
  it('answers a browser preflight and lets the page read the binary header', async () => {
    const res = await fetch(`${h.fake.httpUrl}/v2/models/ensemble/generate_stream`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
    const stream = await post(
      h.fake,
      '/v2/models/ensemble/generate',
      { text_input: 'Hi', max_tokens: 1 },
      {
        headers: { Origin: 'http://localhost:5173' },
      },
    );
    expect(stream.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(stream.headers.get('access-control-expose-headers')).toBe('inference-header-content-length');
  });
});
