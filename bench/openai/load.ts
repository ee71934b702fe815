import { Agent, request } from 'node:http';

/** What one closed-loop load run saw. */
export interface LoadResult {
  readonly requests: number;
  /** SSE `data:` events other than `[DONE]`. */
  readonly events: number;
  /** Events whose first choice carries text: the streamed tokens. */
  readonly textChunks: number;
  readonly wallMs: number;
}

/**
 * Keeps `concurrency` streaming `/v1/completions` in flight on keep-alive connections until
 * `requests` have finished, reading each SSE stream to its end. Any non-200 answer, malformed event
 * or stream without `[DONE]` fails the run: a server that errors cheaply must not look fast.
 */
export async function driveCompletions(options: {
  readonly baseUrl: string;
  readonly model: string;
  readonly concurrency: number;
  readonly requests: number;
  readonly maxTokens: number;
}): Promise<LoadResult> {
  const url = new URL('/v1/completions', options.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const body = JSON.stringify({
    model: options.model,
    prompt: 'Benchmark prompt: stream tokens.',
    max_tokens: options.maxTokens,
    stream: true,
  });
  let started = 0;
  let events = 0;
  let textChunks = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (started < options.requests) {
      started += 1;
      const seen = await oneStream(url, agent, body);
      events += seen.events;
      textChunks += seen.textChunks;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return { requests: started, events, textChunks, wallMs: performance.now() - t0 };
}

function oneStream(url: URL, agent: Agent, body: string): Promise<{ events: number; textChunks: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'text/event-stream' } },
      (res) => {
        res.setEncoding('utf8');
        let buffered = '';
        let events = 0;
        let textChunks = 0;
        let done = false;
        if (res.statusCode !== 200) {
          res.on('data', (text: string) => {
            buffered += text;
          });
          res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${buffered.slice(0, 300)}`)));
          return;
        }
        res.on('data', (text: string) => {
          buffered += text;
          // Events end with a blank line; servers differ in CRLF vs LF only in theory, both send LF here.
          let end = buffered.indexOf('\n\n');
          while (end >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            end = buffered.indexOf('\n\n');
            for (const line of event.split('\n')) {
              if (!line.startsWith('data:')) continue;
              const data = line.slice(5).trim();
              if (data === '[DONE]') {
                done = true;
                continue;
              }
              events += 1;
              const choice = (JSON.parse(data) as { choices?: { text?: string }[] }).choices?.[0];
              if (choice?.text !== undefined && choice.text.length > 0) textChunks += 1;
            }
          }
        });
        res.on('end', () => {
          if (done) resolve({ events, textChunks });
          else
            reject(
              new Error(`stream ended without [DONE] after ${events} events: ${buffered.slice(0, 200)}`),
            );
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
