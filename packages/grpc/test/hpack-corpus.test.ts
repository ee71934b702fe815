import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HpackDecoder } from '../src/h2/hpack.js';

// Stories of the public hpack-test-case corpus, written by other encoders (see fixtures/hpack/README.md).
interface Story {
  cases: {
    seqno: number;
    header_table_size?: number | null;
    wire: string;
    headers: Record<string, string>[];
  }[];
}

const root = new URL('./fixtures/hpack/', import.meta.url);
const stories = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((dir) =>
    readdirSync(new URL(`${dir.name}/`, root))
      .filter((file) => file.endsWith('.json'))
      .map((file) => `${dir.name}/${file}`),
  )
  .sort();

describe('hpack-test-case corpus', () => {
  it('holds the stories the README lists', () => {
    expect(stories.length).toBe(137);
  });

  it.each(stories)('%s decodes every case in order', (path) => {
    const story = JSON.parse(readFileSync(new URL(path, root), 'utf8')) as Story;
    // Some stories write null for "not given".
    const first = story.cases[0]?.header_table_size ?? undefined;
    let limit = first ?? 4096;
    const decoder = new HpackDecoder({ maxTableSize: limit });
    for (const block of story.cases) {
      // A case's header_table_size is the SETTINGS value acknowledged just before its block.
      if (typeof block.header_table_size === 'number') {
        limit = block.header_table_size;
        decoder.setMaxTableSize(limit);
      }
      const expected = block.headers.map((field) => Object.entries(field)[0] as [string, string]);
      expect(decoder.decode(Buffer.from(block.wire, 'hex')), `case ${block.seqno}`).toEqual(expected);
      expect(decoder.tableSize).toBeLessThanOrEqual(limit);
    }
  });
});
