/**
 * Encrypts secrets before they are stored and decrypts them for use. The context (tenant and
 * sink) is bound to the ciphertext, so a sealed value copied to another tenant or sink does
 * not open.
 */
export interface SealContext {
  tenant: string;
  sink: string;
}

export interface SecretSealer {
  seal(plaintext: string, context: SealContext): Promise<string>;
  /** Throws when the value was not sealed under this context (or by this key). */
  open(sealed: string, context: SealContext): Promise<string>;
}
