export {
  CORPUS,
  CORPUS_IDS,
  type FinishReason,
  type GeneratedSequence,
  type GenerateOptions,
  generateTokens,
  SENTENCE_STARTS,
  sequenceCount,
  tokenLogProb,
} from './generator.js';
export { jsonSchemaInstance } from './guided.js';
export { fakeScript, parseFakeScript } from './script.js';
export { startFakeTriton } from './server.js';
export type { FakeEvent, FakeFaults, FakeTriton, FakeTritonOptions } from './types.js';
export { decode, END_ID, encode, fakeTokenizer, PAD_ID, VOCAB_SIZE, WORDS } from './vocabulary.js';
