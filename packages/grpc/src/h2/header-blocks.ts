import { H2Violation, violation } from './errors.js';
import { H2_COMPRESSION_ERROR, H2_ENHANCE_YOUR_CALM } from './frames.js';
import { HpackDecoder, HpackError, HpackListTooLargeError } from './hpack.js';
import type { H2Headers } from './stream.js';

// CONTINUATION frames one header block may take: 64 KiB in frames of 16 KiB takes 4; tiny frames
// (1 byte each) are refused long before the size limit (nghttp2 allows 8: CVE-2024-27316).
const MAX_CONTINUATIONS = 32;

/** A whole header block, decoded. */
export interface HeaderBlock {
  readonly streamId: number;
  readonly endStream: boolean;
  readonly headers: H2Headers;
}

/**
 * The header blocks of one connection: a block split over CONTINUATION frames is gathered (and
 * bounded while it arrives), then decoded by the connection's one HPACK decoder, whose table must
 * follow every block in order (even those of streams already reset).
 */
export class HeaderBlocks {
  private readonly decoder: HpackDecoder;
  private pending: { streamId: number; endStream: boolean; parts: Buffer[]; length: number } | undefined;

  constructor(
    /** SETTINGS_MAX_HEADER_LIST_SIZE as we advertise it: bounds both the block and its decoded list. */
    private readonly maxListSize: number,
    tableSize: number,
  ) {
    this.decoder = new HpackDecoder({ maxTableSize: tableSize, maxHeaderListSize: maxListSize });
  }

  /** Whether a block waits for its CONTINUATION frames (no other frame may come in between). */
  get open(): boolean {
    return this.pending !== undefined;
  }

  get openStreamId(): number | undefined {
    return this.pending?.streamId;
  }

  /** The fragment of a HEADERS frame: the whole block with END_HEADERS, else the first part. */
  begin(
    streamId: number,
    endStream: boolean,
    endHeaders: boolean,
    fragment: Buffer,
  ): HeaderBlock | undefined {
    if (endHeaders) return this.decode(streamId, endStream, fragment);
    this.pending = { streamId, endStream, parts: [Buffer.from(fragment)], length: fragment.length };
    this.checkSize(this.pending.length, streamId);
    return undefined;
  }

  /** A CONTINUATION frame's fragment; the decoded block once END_HEADERS ends it. */
  continue(streamId: number, endHeaders: boolean, fragment: Buffer): HeaderBlock | undefined {
    const block = this.pending;
    if (block === undefined || block.streamId !== streamId) {
      throw violation(`an unexpected CONTINUATION frame on stream ${streamId}`);
    }
    if (block.parts.length > MAX_CONTINUATIONS) {
      throw new H2Violation(
        H2_ENHANCE_YOUR_CALM,
        `a CONTINUATION flood: a header block in more than ${MAX_CONTINUATIONS} CONTINUATION frames on stream ${streamId}`,
        'resource_exhausted',
      );
    }
    block.length += fragment.length;
    // Bounded while it arrives: a block continued forever is refused at the limit, not buffered.
    this.checkSize(block.length, streamId);
    block.parts.push(Buffer.from(fragment));
    if (!endHeaders) return undefined;
    this.pending = undefined;
    return this.decode(streamId, block.endStream, Buffer.concat(block.parts, block.length));
  }

  private checkSize(length: number, streamId: number): void {
    if (length > this.maxListSize) throw this.tooLarge('block', streamId);
  }

  private tooLarge(what: string, streamId: number): H2Violation {
    return new H2Violation(
      H2_ENHANCE_YOUR_CALM,
      `a header ${what} larger than the ${this.maxListSize} bytes we allow (SETTINGS_MAX_HEADER_LIST_SIZE) on stream ${streamId}`,
      'resource_exhausted',
    );
  }

  private decode(streamId: number, endStream: boolean, block: Buffer): HeaderBlock {
    let fields: [string, string][];
    try {
      fields = this.decoder.decode(block);
    } catch (err) {
      if (err instanceof HpackListTooLargeError) throw this.tooLarge('list', streamId);
      const why = err instanceof HpackError ? err.message : String(err);
      throw violation(`a header block that cannot be decoded (HPACK: ${why})`, H2_COMPRESSION_ERROR);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of fields) {
      const before = headers[name];
      headers[name] = before === undefined ? value : `${before}, ${value}`;
    }
    return { streamId, endStream, headers };
  }
}
