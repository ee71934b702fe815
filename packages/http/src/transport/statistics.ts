import type { ModelStatistics } from '@trtllm/sdk';
import type { StatisticDuration } from '@trtllm/sdk/transport';
import type { ErrorContext } from '../errors.js';
import { arrayAt, numberAt, objectAt, stringAt } from './wire-json.js';

/**
 * `GET .../stats` (`{"model_stats": [...]}`, the gRPC message's field names) as core's
 * statistics. Counters are 64-bit and arrive as numbers or numeric strings.
 */
export function statisticsFromJson(json: unknown, context: ErrorContext): ModelStatistics[] {
  const body = objectAt(json, 'stats', context);
  return arrayAt(body.model_stats, 'model_stats', context).map((value, i) => {
    const path = `model_stats[${i}]`;
    const stats = objectAt(value, path, context);
    const inferenceStats: Record<string, StatisticDuration> = {};
    if (stats.inference_stats !== undefined) {
      for (const [key, entry] of Object.entries(
        objectAt(stats.inference_stats, `${path}.inference_stats`, context),
      )) {
        const where = `${path}.inference_stats.${key}`;
        const duration = objectAt(entry, where, context);
        inferenceStats[key] = {
          count: numberAt(duration.count, `${where}.count`, context, 0),
          ns: numberAt(duration.ns, `${where}.ns`, context, 0),
        };
      }
    }
    return {
      name: stringAt(stats.name, `${path}.name`, context),
      version: stringAt(stats.version, `${path}.version`, context, ''),
      lastInference: numberAt(stats.last_inference, `${path}.last_inference`, context, 0),
      inferenceCount: numberAt(stats.inference_count, `${path}.inference_count`, context, 0),
      executionCount: numberAt(stats.execution_count, `${path}.execution_count`, context, 0),
      inferenceStats,
    };
  });
}
