import { EMULATOR_CREDENTIALS } from '../src/store/emulator-credentials.ts';

/**
 * DynamoDB Local accepts any credentials; the SDK still signs requests. (The local `@connections`
 * endpoint does not: it takes only the stack's management credentials, management-credentials.ts.)
 */
export const LOCAL_CREDENTIALS = EMULATOR_CREDENTIALS;

/** Sets placeholder credentials for SDK clients that read the environment, where none are set. */
export function useLocalCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey;
  process.env.AWS_REGION ??= 'us-east-1';
}
