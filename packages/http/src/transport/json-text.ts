import { invalidArgument, type Parameters } from '@trtllm/sdk/transport';

/**
 * JSON text of one value. Written by hand rather than with `JSON.stringify` so that 64-bit
 * integers (`bigint`) keep every digit and keys keep the caller's order exactly.
 */
export function jsonScalar(value: unknown, field: string): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw invalidArgument(field, value, 'JSON has no NaN or Infinity');
      return JSON.stringify(value);
    default:
      throw invalidArgument(field, value, 'must be a string, number, bigint or boolean');
  }
}

/** `{"k":v,...}` from already-written values, in the given order. */
export function jsonObject(entries: ReadonlyArray<readonly [string, string]>): string {
  return `{${entries.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`;
}

/** Request parameters as a JSON object, `extra` appended last (and winning on a shared key). */
export function parametersJson(
  parameters: Parameters | undefined,
  field: string,
  extra: ReadonlyArray<readonly [string, string]> = [],
): string | undefined {
  const own = Object.entries(parameters ?? {})
    .filter(([key]) => !extra.some(([name]) => name === key))
    .map(([key, value]) => [key, jsonScalar(value, `${field}.${key}`)] as const);
  const all = [...own, ...extra];
  return all.length === 0 ? undefined : jsonObject(all);
}
