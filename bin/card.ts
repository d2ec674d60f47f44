/**
 * `npm run card -- --agent <agent> --operator <operator> --aud <tenant> --key key.jwk
 * [--accepts control.cancel,...] [--valid-for <seconds, default 43200>] [--detached] [--kid <id>]
 * [--alg ES256|EdDSA]`
 *
 * Prints an identity card (AEP-0003 §8.3) signed with the private JWK in `--key` (created
 * there, with `--alg`, default ES256, when the file does not exist), then the public JWKS to
 * register for the operator (`aep-relay operators add <operator> --jwks <file>`). The card is
 * for the tenants `--aud` names (repeat it for several) and valid for 12 hours by default,
 * well inside the day a relay takes at most.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import { parseArgs } from 'node:util';
import { publicJwksOf, signCard, signingKeyOf } from './card/make-card.ts';

const { values } = parseArgs({
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
});
if (values.agent === undefined || values.operator === undefined || values.aud === undefined || values.key === undefined) {
  process.stderr.write('usage: npm run card -- --agent <agent> --operator <operator> --aud <tenant> [--aud <tenant>...] --key key.jwk [--accepts a,b] [--valid-for seconds] [--detached] [--kid id] [--alg ES256|EdDSA]\n');
  process.exit(2);
}
if (!existsSync(values.key)) {
  const { privateKey } = await generateKeyPair(values.alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), alg: values.alg, kid: values.kid ?? `${values.operator}-1` };
  writeFileSync(values.key, `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
  process.stderr.write(`wrote a new ${values.alg} private key to ${values.key} (keep it secret; register only the JWKS below)\n`);
}
const privateJwk = JSON.parse(readFileSync(values.key, 'utf8')) as JWK;
const validUntil = new Date(Date.now() + Number(values['valid-for']) * 1000).toISOString();
const accepts = values.accepts === '' ? [] : values.accepts.split(',');
const card = await signCard(
  { agent: values.agent, operator: values.operator, accepts, valid_until: validUntil, aud: values.aud.length === 1 ? values.aud[0] : values.aud, endpoints: [] },
  await signingKeyOf(privateJwk),
  { alg: privateJwk.alg ?? values.alg, ...(privateJwk.kid === undefined ? {} : { kid: privateJwk.kid }), detached: values.detached },
);
process.stdout.write(`card: ${typeof card === 'string' ? card : JSON.stringify(card)}\n`);
process.stdout.write(`jwks: ${JSON.stringify(publicJwksOf(privateJwk))}\n`);
