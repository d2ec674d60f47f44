/**
 * Published on-demand list prices, US East (N. Virginia), used to turn measured counts into
 * dollars. Compiled on 2026-11-30 from the AWS pricing pages (DynamoDB on-demand, Lambda,
 * API Gateway); the DynamoDB on-demand rates are those in force since the 2024-11-01
 * reduction. Free tiers and volume discounts are ignored. Check the pages before relying on
 * these figures: prices change.
 */
import { STREAM_MEMORY_MB } from '../infra/constructs/stream-memory.ts';

export const PRICE_TABLE_DATE = '2026-11-30';

export interface Price {
  key: string;
  item: string;
  usd: number;
  per: string;
  source: string;
}

export const PRICES = {
  dynamoWrite: { key: 'dynamoWrite', item: 'DynamoDB on-demand write request unit (Standard table class)', usd: 0.625, per: 'million WRU', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  dynamoRead: { key: 'dynamoRead', item: 'DynamoDB on-demand read request unit (Standard table class)', usd: 0.125, per: 'million RRU', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  streamsRead: { key: 'streamsRead', item: 'DynamoDB Streams GetRecords made by a Lambda trigger', usd: 0, per: 'million requests (free for Lambda triggers; $0.02 per 100,000 for other readers)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  lambdaRequest: { key: 'lambdaRequest', item: 'Lambda requests', usd: 0.2, per: 'million invocations', source: 'https://aws.amazon.com/lambda/pricing/' },
  lambdaArmGbSecond: { key: 'lambdaArmGbSecond', item: 'Lambda duration, Arm (first 7.5 billion GB-s a month)', usd: 0.0000133334, per: 'GB-second', source: 'https://aws.amazon.com/lambda/pricing/' },
  websocketMessage: { key: 'websocketMessage', item: 'API Gateway WebSocket messages, sent or received (first 1 billion; billed in 32 KB increments)', usd: 1.0, per: 'million messages', source: 'https://aws.amazon.com/api-gateway/pricing/' },
  websocketConnectionMinute: { key: 'websocketConnectionMinute', item: 'API Gateway WebSocket connection minutes', usd: 0.25, per: 'million connection minutes', source: 'https://aws.amazon.com/api-gateway/pricing/' },
  httpApiRequest: { key: 'httpApiRequest', item: 'API Gateway HTTP API requests (first 300 million; billed in 512 KB increments)', usd: 1.0, per: 'million requests', source: 'https://aws.amazon.com/api-gateway/pricing/' },
} satisfies Record<string, Price>;

/**
 * Function memory sizes (MB), taken from the deployment's function shapes
 * (infra/constructs/relay-functions.ts: 512 MB, the authorizer 256 MB, arm64); the stream
 * function's is measured (infra/constructs/stream-memory.ts, `npm run bench:sse-hour`).
 */
export const MEMORY_MB = { http: 512, authorizer: 256, socket: 512, fanout: 512, stream: STREAM_MEMORY_MB, bridges: 512, sinkretry: 256, fanoutlane: 1024 } as const;
