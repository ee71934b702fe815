import type { DataType } from '@trtllm/sdk';
import { isDataType, type ParameterValue } from '@trtllm/sdk/transport';
import { type ErrorContext, protocolError } from '../errors.js';

/** Readers for parsed server JSON: each names the path of a value that has the wrong shape. */

export type JsonObject = Readonly<Record<string, unknown>>;

export function objectAt(value: unknown, path: string, context: ErrorContext): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw unexpected(value, path, 'an object', context);
  return value as JsonObject;
}

/** An array; absent means empty (Triton omits empty repeated fields). */
export function arrayAt(value: unknown, path: string, context: ErrorContext): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw unexpected(value, path, 'an array', context);
  return value;
}

export function stringAt(value: unknown, path: string, context: ErrorContext, fallback?: string): string {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string') throw unexpected(value, path, 'a string', context);
  return value;
}

/** A number that may arrive as a JSON number or, for 64-bit fields, as a numeric string. */
export function numberAt(value: unknown, path: string, context: ErrorContext, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw unexpected(value, path, 'a number', context);
  return n;
}

export function booleanAt(value: unknown, path: string, context: ErrorContext, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw unexpected(value, path, 'a boolean', context);
  return value;
}

export function dataTypeAt(value: unknown, path: string, context: ErrorContext): DataType {
  if (typeof value !== 'string' || !isDataType(value)) {
    throw unexpected(value, path, 'a tensor data type', context);
  }
  return value;
}

/** Response parameters: scalar values kept, anything else dropped. */
export function parametersAt(value: unknown): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
  }
  return out;
}

function unexpected(value: unknown, path: string, expected: string, context: ErrorContext) {
  const got = value === undefined ? 'missing' : JSON.stringify(value)?.slice(0, 60);
  return protocolError(`${path} should be ${expected}, got ${got}`, context);
}
