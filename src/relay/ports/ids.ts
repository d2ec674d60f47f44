/** Mints a fresh, time-ordered unique id (a ULID in the runtime). */
export type IdMinter = () => string;
