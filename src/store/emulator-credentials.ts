/**
 * Placeholder credentials for DynamoDB Local: it accepts any credentials, but the SDK still
 * signs requests and needs some. (The local stack's `@connections` endpoint takes only the
 * management credentials that stack prints at start.)
 */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
