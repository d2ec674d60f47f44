/** The deployment's secret for signing the opaque cursors of paged reads (so a tampered cursor is detected). */
export interface CursorKeysPort {
  /** The signing key; created once per deployment, the same for every process. */
  cursorKey(): Promise<Uint8Array>;
}
