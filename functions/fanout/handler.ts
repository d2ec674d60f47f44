/**
 * `functions/fanout`: invoked by the event log's DynamoDB Stream (through an event source
 * mapping with per-record failure reporting); delivers new events to WebSocket subscribers.
 */
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { fanOut } from '../../src/relay/fanout/fanout.ts';
import { createRuntime } from '../../src/relay/runtime.ts';

const runtime = createRuntime(readRelayConfig(process.env));
const logger = createLogger({ service: 'aep-relay-fanout' });

export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>().handler(async (event, context) => {
  const report = await fanOut(runtime, logger.child({ requestId: context.awsRequestId }), event.Records);
  logger.debug('fan-out batch', { records: event.Records.length, posted: report.posted, dropped: report.dropped, disconnected: report.disconnected, failed: report.batchItemFailures.length });
  return { batchItemFailures: report.batchItemFailures };
});
