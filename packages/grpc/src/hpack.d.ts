// Types of the `hpack` package (RFC 7541), which ships none: only what this package uses.
declare module 'hpack' {
  class HPACK {
    /** Decodes one header block, updating this decoder's dynamic table; pairs of [name, value]. */
    decode(block: Buffer): [string, string][];
  }
  export = HPACK;
}
