import { EMULATOR_CREDENTIALS } from '../src/store/emulator-credentials.ts';

/** DynamoDB Local and the local gateway accept any credentials; the SDK still signs requests. */
export const LOCAL_CREDENTIALS = EMULATOR_CREDENTIALS;

/** Sets placeholder credentials for handlers whose SDK clients read the environment. */
export function useLocalCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey;
  process.env.AWS_REGION ??= 'us-east-1';
}
