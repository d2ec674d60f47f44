/**
 * `npm run card -- --agent <agent> --operator <operator> --aud <tenant> [--key <file.jwk>]
 * [--accepts control.cancel,...] [--valid-for <seconds, default 43200>] [--detached] [--kid <id>]
 * [--alg ES256|EdDSA]`
 *
 * Prints an identity card (AEP-0003 §8.3) signed with the private JWK in `--key` (created
 * there, with `--alg`, default ES256, when the file does not exist), then the public JWKS to
 * register for the operator (`aep-relay operators add <operator> --jwks <file>`). The card is
 * for the tenants `--aud` names (repeat it for several) and valid for 12 hours by default,
 * well inside the day a relay takes at most. The key's default place is the git-ignored data
 * folder, so a private key never lands in the checkout.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import { publicJwksOf, signCard, signingKeyOf } from './card/make-card.ts';
import { UsageError } from './cli/cli-arguments.ts';
import { scriptArguments } from './cli/script-arguments.ts';

const dataDir = process.env.AEP_DATA_DIR ?? '.aep-local';
const USAGE = `Usage: npm run card -- --agent <agent> --operator <operator> --aud <tenant> [--aud <tenant>...] [--key <file.jwk>]
                     [--accepts <type,type,...>] [--valid-for <seconds>] [--detached] [--kid <id>] [--alg ES256|EdDSA]

Prints an identity card (AEP-0003 §8.3) signed with the operator's private key, then the public
JWKS to register (npx aep-relay operators add <operator> --jwks <file>, or --jwks - from stdin).

  --agent <agent>        the agent the card names
  --operator <operator>  the operator that signs it
  --aud <tenant>         a tenant the card is for (its audience, aud); repeat it for several
  --key <file.jwk>       the private key (default ${join(dataDir, 'keys', '<operator>.jwk')}, in the
                         git-ignored data folder, AEP_DATA_DIR); made there when it does not exist
  --accepts <list>       the control types the card covers (default none)
  --valid-for <seconds>  how long the card holds (default 43200, 12 h; a relay takes at most a day)
  --detached             a detached JWS ({ jws, payload }) instead of a compact one
  --kid <id>             the key id of a new key (default <operator>-1)
  --alg ES256|EdDSA      the algorithm of a new key (default ES256)`;

const { values } = scriptArguments({
  command: 'npm run card --',
  usage: USAGE,
  config: {
    options: {
      agent: { type: 'string' },
      operator: { type: 'string' },
      aud: { type: 'string', multiple: true },
      key: { type: 'string' },
      accepts: { type: 'string', default: '' },
      'valid-for': { type: 'string', default: '43200' },
      detached: { type: 'boolean', default: false },
      kid: { type: 'string' },
      alg: { type: 'string', default: 'ES256' },
    },
  },
  check: ({ values }) => {
    if (values.agent === undefined || values.operator === undefined || values.aud === undefined) throw new UsageError('--agent, --operator and --aud are required');
    if (!/^[1-9]\d*$/.test(values['valid-for'])) throw new UsageError(`--valid-for is a positive number of seconds, got ${JSON.stringify(values['valid-for'])}`);
    if (values.alg !== 'ES256' && values.alg !== 'EdDSA') throw new UsageError(`--alg is ES256 or EdDSA, got ${JSON.stringify(values.alg)}`);
  },
});
const operator = values.operator as string;
const keyFile = values.key ?? join(dataDir, 'keys', `${operator}.jwk`);
if (!existsSync(keyFile)) {
  const { privateKey } = await generateKeyPair(values.alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), alg: values.alg, kid: values.kid ?? `${operator}-1` };
  mkdirSync(dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
  process.stderr.write(`wrote a new ${values.alg} private key to ${keyFile} (keep it secret; register only the JWKS below)\n`);
}
const privateJwk = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
const validUntil = new Date(Date.now() + Number(values['valid-for']) * 1000).toISOString();
const accepts = values.accepts === '' ? [] : values.accepts.split(',');
const card = await signCard(
  { agent: values.agent as string, operator, accepts, valid_until: validUntil, aud: (values.aud as string[]).length === 1 ? (values.aud as string[])[0] as string : (values.aud as string[]), endpoints: [] },
  await signingKeyOf(privateJwk),
  { alg: privateJwk.alg ?? values.alg, ...(privateJwk.kid === undefined ? {} : { kid: privateJwk.kid }), detached: values.detached },
);
process.stdout.write(`card: ${typeof card === 'string' ? card : JSON.stringify(card)}\n`);
process.stdout.write(`jwks: ${JSON.stringify(publicJwksOf(privateJwk))}\n`);
