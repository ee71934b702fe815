import { H2Violation } from './errors.js';
import { H2_ENHANCE_YOUR_CALM } from './frames.js';

// Frames that cost us work and carry nothing for a call are counted per window of this long
// (issue 55: 100,000 PINGs were all answered, +43 MiB; 1,000,000 empty DATA frames all read, the
// CVE-2019-9518 shape). The limits follow nghttp2 (under node:http2 and grpc-js): at most 1000
// PING and SETTINGS acknowledgements waiting to be sent (max_outbound_ack), stream resets in
// bursts of 1000, and Node's 1000 invalid frames per session. Real traffic is far below: a server
// sends SETTINGS once or twice per connection, PINGs at most a few a second (grpc's BDP probes
// wait 100 ms and more between pings), an empty DATA frame at most once per stream (before the
// trailers), and resets only streams we opened.
export const FLOOD_WINDOW_MS = 1000;
/** PING frames per window (answered or not). */
export const MAX_PINGS = 1000;
/** SETTINGS frames per window (each is acknowledged). */
export const MAX_SETTINGS = 1000;
/** RST_STREAM frames for streams no longer open, per window (one that closes a call is not counted). */
export const MAX_STALE_RESETS = 1000;
/** Frames with nothing in them (DATA without END_STREAM, header fragments that end nothing), per window. */
export const MAX_EMPTY_FRAMES = 1000;
/** The same, on one stream. */
export const MAX_EMPTY_FRAMES_PER_STREAM = 100;
/** Acknowledgements (PING, SETTINGS) written while the peer reads nothing back, as nghttp2's max_outbound_ack. */
export const MAX_UNSENT_ANSWERS = 1000;

/**
 * How often one kind of frame came within the current window: a counter and a timestamp compare
 * per frame, nothing for frames that carry data. Past `limit` in one window, the peer floods us.
 */
export class FloodCounter {
  private count = 0;
  private since = 0;

  constructor(
    /** The flood, as the error names it ("a PING flood"). */
    private readonly flood: string,
    /** What is counted ("PING frames"). */
    private readonly what: string,
    private readonly limit: number,
  ) {}

  /** One more frame at `now` (ms); throws the flood's violation past the limit. */
  hit(now: number): void {
    if (now - this.since >= FLOOD_WINDOW_MS) {
      this.since = now;
      this.count = 1;
      return;
    }
    if (++this.count > this.limit) {
      throw floodViolation(
        `${this.flood}: more than ${this.limit} ${this.what} within ${FLOOD_WINDOW_MS / 1000} s`,
      );
    }
  }
}

/** A flood: GOAWAY ENHANCE_YOUR_CALM, and every stream fails `resource_exhausted` naming it. */
export function floodViolation(detail: string): H2Violation {
  return new H2Violation(H2_ENHANCE_YOUR_CALM, detail, 'resource_exhausted');
}
