/** Wire data type names (KServe v2 / gRPC `datatype`); `BYTES` is the config's `TYPE_STRING`. */
export type DataType =
  | 'BOOL'
  | 'UINT8'
  | 'UINT16'
  | 'UINT32'
  | 'UINT64'
  | 'INT8'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'FP16'
  | 'FP32'
  | 'FP64'
  | 'BYTES'
  | 'BF16';

export const DATA_TYPES: readonly DataType[] = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'BF16',
];

export function isDataType(value: string): value is DataType {
  return (DATA_TYPES as readonly string[]).includes(value);
}

/** The config enum name of a wire data type. */
export function configDataType(datatype: DataType): string {
  return datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`;
}

/** One declared input or output of a model config (dims without the batch dimension). */
export interface TensorSpec {
  readonly name: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
  readonly optional: boolean;
  /** Declared `[1]` but reshaped to a scalar inside the model (`reshape: { shape: [] }`). */
  readonly reshapeToScalar: boolean;
}

/** Which backend snapshot a tensor appeared in (shared/protocol/trtllm-models.md columns). */
export type Since = 'v0.8' | 'v0.11' | '2025' | '2026';

/** A row of a version table: a tensor, when it appeared or was renamed away, and its v0.11 dims. */
export interface TableRow extends TensorSpec {
  readonly since: Since;
  /** Absent from the 2026 names on (renamed). */
  readonly renamedIn2026: boolean;
  readonly v011Dims: readonly number[] | undefined;
}

interface RowFlags {
  readonly opt?: boolean;
  readonly scalar?: boolean;
  readonly since?: Since;
  readonly renamed?: boolean;
  readonly v011?: readonly number[];
}

/** A table row; inputs are optional unless `opt: false`. */
export function row(
  name: string,
  datatype: DataType,
  dims: readonly number[],
  flags: RowFlags = {},
): TableRow {
  return {
    name,
    datatype,
    dims,
    optional: flags.opt ?? true,
    reshapeToScalar: flags.scalar ?? false,
    since: flags.since ?? 'v0.8',
    renamedIn2026: flags.renamed ?? false,
    v011Dims: flags.v011,
  };
}

/** The backend generation the fake imitates. */
export type BackendVersion = 'latest' | '2025-03' | 'v0.11';

/** The tensors of a table as a backend of `version` declares them. */
export function tensorsFor(table: readonly TableRow[], version: BackendVersion): TensorSpec[] {
  const rows =
    version === 'latest'
      ? table.filter((r) => !r.renamedIn2026)
      : version === '2025-03'
        ? table.filter((r) => r.since !== '2026')
        : table.filter((r) => r.since === 'v0.8' || r.since === 'v0.11');
  return rows.map((r) => ({
    name: r.name,
    datatype: r.datatype,
    dims: version === 'v0.11' && r.v011Dims ? r.v011Dims : r.dims,
    optional: r.optional,
    reshapeToScalar: r.reshapeToScalar,
  }));
}
