/**
 * Small helpers for reading and writing DynamoDB attribute values by hand. The relay's items
 * are flat and few, so it does not need a document-client dependency.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { JsonObject } from '../protocol/event.ts';

export type Item = Record<string, AttributeValue>;

export const str = (value: string): AttributeValue => ({ S: value });
export const num = (value: number): AttributeValue => ({ N: String(value) });

export function readString(item: Item | undefined, name: string): string | undefined {
  const value = item?.[name];
  return value !== undefined && 'S' in value ? value.S : undefined;
}

export function readNumber(item: Item | undefined, name: string): number | undefined {
  const value = item?.[name];
  return value !== undefined && 'N' in value && value.N !== undefined ? Number(value.N) : undefined;
}

export function readStringSet(item: Item | undefined, name: string): string[] {
  const value = item?.[name];
  return value !== undefined && 'SS' in value && value.SS !== undefined ? value.SS : [];
}

/** True when a DynamoDB call failed only because its condition did not hold. */
export function isConditionFailure(error: unknown): error is Error & { Item?: Item } {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** A JSON object stored as text; `{}` when absent or not an object (items are written by the relay only). */
export function parseJsonObject(text: string | undefined): JsonObject {
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : {};
  } catch {
    return {};
  }
}
