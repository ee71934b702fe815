import type { TensorSpec } from '../src/transport-kit.js';

/** One input or output of a test model's config, optional unless said otherwise (as most of Triton's are). */
export const spec = (
  name: string,
  datatype: TensorSpec['datatype'],
  dims: number[],
  optional = true,
): TensorSpec => ({
  name,
  datatype,
  dims,
  optional,
});
