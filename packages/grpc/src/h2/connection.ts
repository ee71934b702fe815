import { TritonLlmError } from '@trtllm/sdk';
import {
  CONNECTION_UPDATE_AT,
  type H2ConnectionEvents,
  type H2ConnectionOptions,
  HEADER_TABLE,
  MAX_FRAME_IN,
  MAX_HEADER_LIST,
  MAX_RESTARTS,
  REFUSED_RETRY_MS,
  STREAM_UPDATE_AT,
} from './connection-options.js';
import { goawayError, H2Violation, violation, violationError } from './errors.js';
import {
  FloodCounter,
  MAX_EMPTY_FRAMES,
  MAX_EMPTY_FRAMES_PER_STREAM,
  MAX_PINGS,
  MAX_SETTINGS,
  MAX_STALE_RESETS,
} from './flood.js';
import { H2FrameReader, unpad } from './frame-reader.js';
import {
  ACK,
  CONTINUATION,
  DATA,
  DEFAULT_MAX_FRAME,
  END_HEADERS,
  END_STREAM,
  frame,
  GOAWAY,
  H2_ENHANCE_YOUR_CALM,
  H2_FLOW_CONTROL_ERROR,
  H2_FRAME_SIZE_ERROR,
  H2_INTERNAL_ERROR,
  H2_NO_ERROR,
  H2_REFUSED_STREAM,
  HEADERS,
  MAX_STREAM_ID,
  MAX_WINDOW,
  PADDED,
  PING,
  PRIORITY_FLAG,
  PRIORITY_FRAME,
  PUSH_PROMISE,
  RST_STREAM,
  SETTINGS,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  uint32,
  WINDOW_UPDATE,
} from './frames.js';
import { type HeaderBlock, HeaderBlocks } from './header-blocks.js';
import type { H2Stream } from './stream.js';
import { H2StreamTable } from './stream-table.js';

export type { H2ConnectionEvents, H2ConnectionOptions } from './connection-options.js';

/**
 * One HTTP/2 connection: on the stream table (`stream-table.ts`: streams, their writes, the end of
 * the connection), the frames the peer sends, each checked as RFC 9113 says, flow control of what
 * it sends us, SETTINGS, PING, GOAWAY and refused streams.
 */
export class H2Connection extends H2StreamTable {
  private readonly blocks = new HeaderBlocks(MAX_HEADER_LIST, HEADER_TABLE);
  private readonly reader: H2FrameReader;
  private recvWindow = MAX_WINDOW;
  private unackedBytes = 0;
  /** When the current read arrived (ms): the clock of the flood counters, read once per read. */
  private now = 0;
  private readonly pings = new FloodCounter('a PING flood', 'PING frames', MAX_PINGS);
  private readonly settingsFrames = new FloodCounter('a SETTINGS flood', 'SETTINGS frames', MAX_SETTINGS);
  private readonly staleResets = new FloodCounter(
    'an RST_STREAM flood',
    'RST_STREAM frames for streams no longer open',
    MAX_STALE_RESETS,
  );
  private readonly empties = new FloodCounter('an empty-frame flood', EMPTY_FRAMES, MAX_EMPTY_FRAMES);

  constructor(options: H2ConnectionOptions, events: H2ConnectionEvents<H2StreamTable>) {
    super(options, events);
    this.reader = new H2FrameReader(options.url, MAX_FRAME_IN);
  }

  protected onData(chunk: Buffer): void {
    const now = Date.now();
    this.now = now;
    this.keepalive.received(now);
    // What the frames of this read make us write (window updates, the owners' half-closes and
    // resets) leaves with the writes that follow it (see `send`).
    try {
      this.reader.push(chunk, this.onFrame, this.isDead);
    } catch (err) {
      this.fatal(err);
    }
  }

  /** A violation found while reading, or a bug of ours: the connection cannot go on. */
  private fatal(err: unknown): void {
    if (this.dead) return;
    // The last stream id in our GOAWAY is 0: the server opens none (push is off).
    if (err instanceof H2Violation) this.destroy(violationError(this.options.url, err), err.h2Code);
    else if (err instanceof TritonLlmError) this.destroy(err);
    else this.destroy(err, H2_INTERNAL_ERROR);
  }

  private readonly isDead = (): boolean => this.dead;

  private readonly onFrame = (
    type: number,
    flags: number,
    streamId: number,
    buf: Buffer,
    start: number,
    end: number,
  ): void => {
    if (this.blocks.open && type !== CONTINUATION) {
      throw violation(`a header block was interrupted by a frame of type 0x${type.toString(16)}`);
    }
    if (!this.settingsSeen && type !== SETTINGS) throw violation('the first frame is not SETTINGS');
    switch (type) {
      case DATA:
        this.onDataFrame(flags, streamId, buf, start, end);
        return;
      case HEADERS:
        this.onHeaders(flags, streamId, buf, start, end);
        return;
      case CONTINUATION:
        this.onContinuation(flags, streamId, buf, start, end);
        return;
      case PRIORITY_FRAME:
        this.streamFrame(streamId, 'PRIORITY');
        if (end - start !== 5) throw violation('a PRIORITY frame is not 5 bytes long', H2_FRAME_SIZE_ERROR);
        return;
      case RST_STREAM:
        this.onReset(streamId, buf, start, end);
        return;
      case SETTINGS:
        this.onSettings(flags, streamId, buf, start, end);
        return;
      case PING:
        this.onPing(flags, streamId, buf, start, end);
        return;
      case GOAWAY:
        this.onGoaway(streamId, buf, start, end);
        return;
      case WINDOW_UPDATE:
        this.onWindowUpdate(streamId, buf, start, end);
        return;
      case PUSH_PROMISE:
        throw violation('PUSH_PROMISE after SETTINGS_ENABLE_PUSH 0');
      default:
      // Unknown frame types are ignored (RFC 9113, 4.1 and 5.5).
    }
  };

  private onDataFrame(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    const stream = this.streamFrame(streamId, 'DATA');
    const length = end - start;
    // Flow control counts the whole payload, padding included (RFC 9113, 6.9).
    this.recvWindow -= length;
    if (this.recvWindow < 0) {
      throw violation('DATA beyond the connection window', H2_FLOW_CONTROL_ERROR);
    }
    this.connectionReceived(length);
    let from = start;
    let to = end;
    if ((flags & PADDED) !== 0) [from, to] = unpad(flags, buf, start, end);
    // One compare for a frame with data; an empty one without END_STREAM carries nothing.
    if (to === from && (flags & END_STREAM) === 0) this.emptyFrame(streamId, stream);
    if (stream === undefined) return; // Reset by us: counted, then dropped.
    stream.recvWindow -= length;
    if (stream.recvWindow < 0) {
      throw violation(
        `DATA beyond the window of stream ${streamId} (${length} bytes with ${stream.recvWindow + length} left)`,
        H2_FLOW_CONTROL_ERROR,
      );
    }
    if (!stream.headersSeen) throw violation(`DATA before the response headers on stream ${streamId}`);
    stream.received(length, STREAM_UPDATE_AT);
    if (to > from)
      try {
        stream.owner.dataArrived(buf, from, to);
      } catch (err) {
        this.ownerThrew(stream, err);
      }
    if ((flags & END_STREAM) !== 0 && !stream.done) this.ended(stream);
  }

  private onHeaders(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.streamFrame(streamId, 'HEADERS');
    let [from, to] = unpad(flags, buf, start, end);
    if ((flags & PRIORITY_FLAG) !== 0) from += 5;
    if (from > to) throw violation('a HEADERS frame too short for its flags', H2_FRAME_SIZE_ERROR);
    const fragment = buf.subarray(from, to);
    if (from === to && (flags & END_HEADERS) === 0) this.emptyFrame(streamId, this.streams.get(streamId));
    const endStream = (flags & END_STREAM) !== 0;
    const block = this.blocks.begin(streamId, endStream, (flags & END_HEADERS) !== 0, fragment);
    if (block !== undefined) this.headerBlock(block);
  }

  private onContinuation(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    if (start === end && (flags & END_HEADERS) === 0) this.emptyFrame(streamId, this.streams.get(streamId));
    const block = this.blocks.continue(streamId, (flags & END_HEADERS) !== 0, buf.subarray(start, end));
    if (block !== undefined) this.headerBlock(block);
  }

  private headerBlock({ streamId, endStream, headers }: HeaderBlock): void {
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    if (!stream.headersSeen) {
      // Informational (1xx) headers come before the real ones.
      if (headers[':status']?.startsWith('1') === true && !endStream) return;
      stream.headersSeen = true;
      stream.answered();
      try {
        stream.owner.headersArrived(headers);
      } catch (err) {
        this.ownerThrew(stream, err);
      }
    } else {
      if (!endStream) throw violation(`a second header block without END_STREAM on stream ${streamId}`);
      try {
        stream.owner.trailersArrived(headers);
      } catch (err) {
        this.ownerThrew(stream, err);
      }
    }
    if (endStream && !stream.done) this.ended(stream);
  }

  /** The server ended its side of `stream`: the call is over (ours ended before, or is moot). */
  private ended(stream: H2Stream): void {
    stream.endReceived = true;
    // Our side still open (the server answered before the request ended): RST_STREAM NO_ERROR
    // closes it, so the server does not keep a half-closed stream.
    if (!stream.endSent) this.reset(stream, H2_NO_ERROR);
    else this.forget(stream);
    try {
      stream.owner.closed(undefined);
    } catch (err) {
      this.ownerThrew(stream, err);
    }
  }

  private onReset(streamId: number, buf: Buffer, start: number, end: number): void {
    const stream = this.streamFrame(streamId, 'RST_STREAM');
    if (end - start !== 4) throw violation('an RST_STREAM frame is not 4 bytes long', H2_FRAME_SIZE_ERROR);
    if (stream === undefined) {
      // A reset crossing ours is normal; a stream of them, on streams long gone, is a flood.
      this.staleResets.hit(this.now);
      return;
    }
    const code = buf.readUInt32BE(start);
    // Refused: the server did not process it, so it starts again where there is a free slot
    // (here once one frees, or on another connection), a few times at most. Node's own HTTP/2
    // server (22 and later) refuses a stream over its limit with ENHANCE_YOUR_CALM instead of
    // REFUSED_STREAM, and counts a stream until its JS object is gone, a moment after it closed.
    if (refusal(code) && stream.restartable && stream.restarts < MAX_RESTARTS) {
      this.streams.delete(streamId);
      stream.rewind();
      this.events.refused();
      if (this.streams.size > 0) {
        // It starts here once a stream ends: by then the server counts one stream less.
        this.waiting.unshift(stream);
      } else {
        // Nothing here to end first: a moment's wait, then wherever there is room. The call is
        // still in flight: the timer, not this connection, keeps the process alive meanwhile.
        this.keepalive.stop();
        this.release(stream);
        setTimeout(() => this.events.overflow([stream]), REFUSED_RETRY_MS);
      }
      return;
    }
    this.forget(stream);
    try {
      stream.owner.closed(code);
    } catch (err) {
      this.ownerThrew(stream, err);
    }
  }

  private onSettings(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'SETTINGS');
    this.settingsFrames.hit(this.now);
    if ((flags & ACK) !== 0) {
      if (end !== start) throw violation('a SETTINGS acknowledgement with a payload', H2_FRAME_SIZE_ERROR);
      return;
    }
    if ((end - start) % 6 !== 0)
      throw violation('a SETTINGS frame whose length is not a multiple of 6', H2_FRAME_SIZE_ERROR);
    const first = !this.settingsSeen;
    this.settingsSeen = true;
    // What was assumed before the peer spoke no longer holds: no limit unless it sets one.
    if (first) this.peerMaxStreams = Number.POSITIVE_INFINITY;
    for (let at = start; at < end; at += 6) {
      const id = buf.readUInt16BE(at);
      const value = buf.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW)
          throw violation(`SETTINGS_INITIAL_WINDOW_SIZE ${value}`, H2_FLOW_CONTROL_ERROR);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW) {
            throw violation(
              `SETTINGS_INITIAL_WINDOW_SIZE ${value} overflows a stream window`,
              H2_FLOW_CONTROL_ERROR,
            );
          }
        }
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 0xffffff)
          throw violation(`SETTINGS_MAX_FRAME_SIZE ${value}`);
        this.peerMaxFrame = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      else if (id === SETTINGS_ENABLE_PUSH) {
        // A server may only repeat that push is off (RFC 9113, 6.5.2).
        if (value !== 0) throw violation(`SETTINGS_ENABLE_PUSH ${value} from a server`);
      }
      // SETTINGS_HEADER_TABLE_SIZE bounds the table of the peer's decoder, which our literals
      // never fill; SETTINGS_MAX_HEADER_LIST_SIZE is far above our request headers; unknown
      // settings are ignored (RFC 9113, 6.5.2).
    }
    this.control(frame(SETTINGS, ACK, 0));
    for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
    this.startWaiting();
    if (first) this.events.ready(this);
    if (first && this.waiting.length > 0) {
      const overflow = this.waiting.splice(0);
      this.releaseAll(overflow);
      this.events.overflow(overflow);
    }
  }

  private onPing(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'PING');
    if (end - start !== 8) throw violation('a PING frame is not 8 bytes long', H2_FRAME_SIZE_ERROR);
    this.pings.hit(this.now);
    if ((flags & ACK) !== 0) this.keepalive.answered();
    else this.control(frame(PING, ACK, 0, buf.subarray(start, end)));
  }

  private onWindowUpdate(streamId: number, buf: Buffer, start: number, end: number): void {
    if (end - start !== 4) throw violation('a WINDOW_UPDATE frame is not 4 bytes long', H2_FRAME_SIZE_ERROR);
    const increment = buf.readUInt32BE(start) & MAX_WINDOW;
    if (streamId === 0) {
      if (increment === 0) throw violation('WINDOW_UPDATE of 0 for the connection');
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW)
        throw violation('WINDOW_UPDATE past 2^31-1 for the connection', H2_FLOW_CONTROL_ERROR);
      for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
      return;
    }
    const stream = this.streamFrame(streamId, 'WINDOW_UPDATE');
    if (increment === 0) throw violation(`WINDOW_UPDATE of 0 for stream ${streamId}`);
    if (stream === undefined) return;
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      throw violation(`WINDOW_UPDATE past 2^31-1 for stream ${streamId}`, H2_FLOW_CONTROL_ERROR);
    }
    if (stream.blocked) this.flush(stream);
  }

  private onGoaway(streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'GOAWAY');
    if (end - start < 8) throw violation('a GOAWAY frame shorter than 8 bytes', H2_FRAME_SIZE_ERROR);
    const lastStreamId = buf.readUInt32BE(start) & MAX_STREAM_ID;
    const code = buf.readUInt32BE(start + 4);
    // Debug data is opaque; servers put ASCII there ("too_many_pings"), shown as such, cut short.
    const debug = buf
      .toString('latin1', start + 8, Math.min(end, start + 8 + 200))
      .replace(/[^\x20-\x7e]/g, '?');
    this.goaway = true;
    if (code === H2_ENHANCE_YOUR_CALM && debug === 'too_many_pings') this.events.tooManyPings();
    if (code !== H2_NO_ERROR) this.failure ??= goawayError(this.options.url, code, debug);
    // Streams the server never saw can safely go elsewhere: it says it did not process them.
    const moved = this.waiting.splice(0);
    for (const stream of [...this.streams.values()]) {
      if (stream.id <= lastStreamId) continue;
      this.streams.delete(stream.id);
      if (stream.restartable && stream.restarts < MAX_RESTARTS) {
        stream.rewind();
        moved.push(stream);
      } else {
        this.release(stream);
        stream.done = true;
        try {
          stream.owner.closed(H2_REFUSED_STREAM);
        } catch (err) {
          this.ownerThrew(stream, err);
        }
      }
    }
    this.releaseAll(moved);
    if (moved.length > 0) this.events.unprocessed(moved);
    if (this.streams.size === 0) this.destroy(undefined);
  }

  /** A frame that carries nothing (see `MAX_EMPTY_FRAMES`), counted on the connection and its stream. */
  private emptyFrame(streamId: number, stream: H2Stream | undefined): void {
    this.empties.hit(this.now);
    if (stream === undefined) return;
    stream.empties ??= new FloodCounter(
      `an empty-frame flood on stream ${streamId}`,
      EMPTY_FRAMES,
      MAX_EMPTY_FRAMES_PER_STREAM,
    );
    stream.empties.hit(this.now);
  }

  private connectionReceived(bytes: number): void {
    this.unackedBytes += bytes;
    if (this.unackedBytes >= CONNECTION_UPDATE_AT) {
      this.send(frame(WINDOW_UPDATE, 0, 0, uint32(this.unackedBytes)));
      this.recvWindow += this.unackedBytes;
      this.unackedBytes = 0;
    }
  }
}

const EMPTY_FRAMES = 'frames without payload (DATA without END_STREAM, header fragments that end nothing)';

/**
 * Whether a reset of a stream that got no answer yet means the server did not take it:
 * REFUSED_STREAM, or ENHANCE_YOUR_CALM, which Node's server sends for a stream over its limit.
 */
function refusal(code: number): boolean {
  return code === H2_REFUSED_STREAM || code === H2_ENHANCE_YOUR_CALM;
}
