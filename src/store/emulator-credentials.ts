/**
 * Placeholder credentials for emulated AWS endpoints (DynamoDB Local, the local gateway's
 * `@connections`): they accept any credentials, but the SDK still signs requests and needs some.
 */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
