/**
 * The development OpenID Connect provider `npm start` embeds (`oidc-provider`, the certified
 * Node implementation), so team sign-in can be tried without an account anywhere: its own login
 * page (any password), the authorization code flow with PKCE and the device authorization grant,
 * keys minted at each start. One demo user in the mapped group (`demo`), and one outside it
 * (`visitor`), to see a refusal. Loopback only; never part of a deployment.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** The accounts of the dev provider: login name to claims. */
export const DEV_ACCOUNTS: Readonly<Record<string, { name: string; email: string; groups: string[] }>> = {
  demo: { name: 'Dana Demo', email: 'demo@example.test', groups: ['agent-ops'] },
  visitor: { name: 'Victor Visitor', email: 'visitor@example.test', groups: ['contractors'] },
};

/** The group the local tenant's rule set maps (`local/stack.ts`). */
export const DEV_MAPPED_GROUP = 'agent-ops';
export const DEV_CLIENT_ID = 'aep-relay-local';
export const DEV_DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DevIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

export async function startDevIdentityProvider(options: { port: number; redirectUris: string[] }): Promise<DevIdentityProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: `dev-${randomBytes(4).toString('hex')}`, use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: DEV_CLIENT_ID,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', DEV_DEVICE_GRANT],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: KoaContextWithOIDC, id: string) {
      const account = DEV_ACCOUNTS[id];
      if (account === undefined) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, name: account.name, email: account.email, groups: account.groups }) };
    },
    claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
    // Profile and group claims in the ID token itself, as Okta's, Entra's and Cognito's are configured to.
    conformIdTokenClaims: false,
    // The relay is this provider's own first-party client: no consent screen, only the login page.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { client, session } = ctx.oidc;
      if (client === undefined || session?.accountId === undefined) return undefined;
      const existing = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (existing !== undefined) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid profile email groups');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [signingKey as never] },
    ttl: { IdToken: 3600, AccessToken: 600, AuthorizationCode: 300, DeviceCode: 600, Grant: 3600, Interaction: 600, Session: 3600 },
  });
  // The dev interactions and loopback http would fill the log with warnings meant for deployments.
  provider.on('server_error', (_ctx: unknown, error: Error) => console.error(JSON.stringify({ level: 'error', component: 'dev-identity-provider', message: error.message })));
  server.on('request', provider.callback());
  return {
    issuer,
    clientId: DEV_CLIENT_ID,
    clientSecret,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
