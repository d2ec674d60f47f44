/**
 * Seals secrets with AES-256-GCM under a key from configuration (the local stack's, kept in
 * its git-ignored data folder). The tenant and sink are the additional authenticated data, so a
 * sealed value moved to another tenant or sink fails to open. Deployed stacks seal with KMS
 * instead (`kms-secret-sealer.ts`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealContext, SecretSealer } from '../relay/ports/secret-sealer.ts';

const VERSION = 'a1';

export function aesSecretSealer(key: Buffer): SecretSealer {
  if (key.length !== 32) throw new Error('the bridge sealing key must be 32 bytes (base64 in AEP_BRIDGE_SEAL_KEY)');
  return {
    async seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(aad(context));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    async open(sealed, context) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) throw new Error('not a value sealed by this relay');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

function aad(context: SealContext): Buffer {
  return Buffer.from(JSON.stringify([context.tenant, context.sink]), 'utf8');
}
