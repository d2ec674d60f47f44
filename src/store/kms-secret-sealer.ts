/**
 * Seals secrets with a KMS key (deployed stacks). The tenant and sink ride as the encryption
 * context, which KMS binds to the ciphertext and records in CloudTrail, so a sealed value only
 * opens for the sink it was made for and every use is audited.
 */
import { DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SealContext, SecretSealer } from '../relay/ports/secret-sealer.ts';

const VERSION = 'k1';

export function kmsSecretSealer(client: KMSClient, keyId: string): SecretSealer {
  return {
    async seal(plaintext, context) {
      const output = await client.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: encryptionContext(context) }));
      if (output.CiphertextBlob === undefined) throw new Error('KMS returned no ciphertext');
      return `${VERSION}.${Buffer.from(output.CiphertextBlob).toString('base64url')}`;
    },
    async open(sealed, context) {
      const [version, blob] = sealed.split('.');
      if (version !== VERSION || blob === undefined) throw new Error('not a value sealed by this relay');
      const output = await client.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(blob, 'base64url'), EncryptionContext: encryptionContext(context) }));
      if (output.Plaintext === undefined) throw new Error('KMS returned no plaintext');
      return Buffer.from(output.Plaintext).toString('utf8');
    },
  };
}

function encryptionContext(context: SealContext): Record<string, string> {
  return { 'aep:tenant': context.tenant, 'aep:sink': context.sink };
}
