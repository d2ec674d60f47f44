/** A broken protocol rule, named by the spec section it breaks. Validators return these as data; they never throw on hostile input. */
export interface Violation {
  /** The spec rule, e.g. `AEP-0001 §5.2`. */
  rule: string;
  /** Where in the event (attribute or JSON path), when one applies. */
  path?: string;
  /** A sentence a client developer can act on. */
  message: string;
}

export function violation(rule: string, message: string, path?: string): Violation {
  return path === undefined ? { rule, message } : { rule, path, message };
}
