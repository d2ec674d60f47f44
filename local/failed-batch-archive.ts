/**
 * The local stand-in for the deployed mappings' S3 on-failure destinations
 * (infra/constructs/failed-batch-archive.ts): each discarded batch, metadata and records, one
 * JSON file per batch in a folder of the stack's data directory, named by time so a listing
 * reads oldest first. Without a folder (an in-memory stack) nothing is written; the stack still
 * logs each failure and keeps the fan-out ones in memory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamBatchFailure } from './stream-batch-delivery.ts';

export function failedBatchArchive(folder: string | undefined): (failure: StreamBatchFailure) => void {
  if (folder === undefined) return () => undefined;
  return (failure) => {
    mkdirSync(folder, { recursive: true });
    const name = `${failure.timestamp.replaceAll(':', '.')}-${failure.requestContext.requestId}.json`;
    writeFileSync(join(folder, name), `${JSON.stringify(failure, null, 2)}\n`);
  };
}
