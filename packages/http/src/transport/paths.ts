import { invalidArgument } from '@trtllm/sdk/transport';

/** `/v2/models/{m}[/versions/{v}]`; an empty or absent version lets the server pick. */
export function modelPath(model: string, version: string | undefined): string {
  if (typeof model !== 'string' || model === '')
    throw invalidArgument('model', model, 'must be a non-empty string');
  if (version !== undefined && typeof version !== 'string') {
    throw invalidArgument('version', version, 'must be a string');
  }
  const base = `/v2/models/${encodeURIComponent(model)}`;
  return version === undefined || version === '' ? base : `${base}/versions/${encodeURIComponent(version)}`;
}
