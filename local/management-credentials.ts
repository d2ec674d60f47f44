import { randomBytes } from 'node:crypto';

/**
 * Management credentials for one run of the local stack: the only key its `@connections`
 * listener accepts (see gateway/management-listener.ts). Fresh at every start, so nothing
 * outside the stack knows them unless `npm start` printed them to its operator.
 */
export interface ManagementCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export function mintManagementCredentials(): ManagementCredentials {
  return {
    // Shaped like an access key id (upper-case letters and digits) so SDKs take it as one.
    accessKeyId: `AKIALOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64'),
  };
}

/**
 * Makes the management credentials the process's environment credentials, so every SDK client
 * built by the default chain signs with them: the handlers' `@connections` poster (including the
 * deployable bundles, which build everything from the environment). DynamoDB Local takes any
 * credentials (the stack runs it with `-sharedDb`), so its clients keep working.
 */
export function useManagementCredentials(credentials: ManagementCredentials): void {
  process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
}
