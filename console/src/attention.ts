/**
 * The attention inbox as a pure fold over events (AEP-0002 §7): a request is open from its
 * `attention.requested` until a terminal event (`attention.resolved` or `attention.timeout`)
 * names it in `subject`. Commands the console sent are followed by their `id`: acks carry it
 * in `cause` (AEP-0004 §3), `attention.answered` too (§6), and a relay refusal is an `error`
 * frame with that `cause` (§4.2).
 */
export type AepObject = Record<string, unknown>;

export interface AttentionOption {
  id: string;
  label: string;
}

/** One field of a `kind: "form"` request (AEP-0006, AEP-0002 §5.2 `field_spec`). */
export interface FormField {
  id: string;
  type: 'string' | 'number' | 'boolean' | 'select';
  label: string;
  required: boolean;
  multi: boolean;
  choices: AttentionOption[];
  min?: number;
  max?: number;
}

export interface AttentionRequest {
  id: string;
  session: string;
  agent: string;
  time: string;
  kind: string;
  prompt: string;
  options: AttentionOption[];
  fields: FormField[];
  /** False when `respond_via` is present without `control`: answered elsewhere (AEP-0008). */
  answerableByControl: boolean;
  expiresAt?: string;
  /** `attention.answered` seen (answer applied, not yet resolved). */
  answered?: AepObject;
  /** The terminal event, once seen. */
  terminal?: AepObject;
  event: AepObject;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const record = (value: unknown): AepObject => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AepObject) : {});

function optionsOf(value: unknown): AttentionOption[] {
  if (!Array.isArray(value)) return [];
  return value.map(record).filter((option) => text(option.id) !== '').map((option) => ({ id: text(option.id), label: text(option.label) || text(option.id) }));
}

function fieldsOf(value: unknown): FormField[] {
  if (!Array.isArray(value)) return [];
  const types = ['string', 'number', 'boolean', 'select'];
  return value
    .map(record)
    .filter((field) => text(field.id) !== '' && types.includes(text(field.type)))
    .map((field) => ({
      id: text(field.id),
      type: text(field.type) as FormField['type'],
      label: text(field.label) || text(field.id),
      required: field.required === true,
      multi: field.multi === true,
      choices: optionsOf(field.choices),
      ...(typeof field.min === 'number' ? { min: field.min } : {}),
      ...(typeof field.max === 'number' ? { max: field.max } : {}),
    }));
}

export function requestOf(event: AepObject): AttentionRequest {
  const data = record(event.data);
  const respondVia = data.respond_via;
  return {
    id: text(event.id),
    session: text(event.session),
    agent: text(event.agent),
    time: text(event.time),
    kind: text(data.kind) || 'other',
    prompt: text(data.prompt),
    options: optionsOf(data.options),
    fields: text(data.kind) === 'form' ? fieldsOf(data.fields) : [],
    answerableByControl: !Array.isArray(respondVia) || respondVia.includes('control'),
    ...(typeof data.expires_at === 'string' ? { expiresAt: data.expires_at } : {}),
    event,
  };
}

/** Every attention request seen, by id; terminal and answered state folded in. */
export class AttentionBook {
  private readonly requests = new Map<string, AttentionRequest>();
  /** Lifecycle events that arrived before their request (replay order across sessions is not global). */
  private readonly early = new Map<string, AepObject[]>();

  /** Folds one event in; returns true when the inbox changed. */
  apply(event: AepObject): boolean {
    const type = text(event.type);
    if (type === 'attention.requested') {
      const id = text(event.id);
      if (id === '' || this.requests.has(id)) return false;
      const request = requestOf(event);
      this.requests.set(id, request);
      for (const later of this.early.get(id) ?? []) this.applyLifecycle(request, later);
      this.early.delete(id);
      return true;
    }
    if (type !== 'attention.answered' && type !== 'attention.resolved' && type !== 'attention.timeout') return false;
    const subject = text(event.subject);
    const request = this.requests.get(subject);
    if (request === undefined) {
      if (subject !== '') this.early.set(subject, [...(this.early.get(subject) ?? []), event]);
      return false;
    }
    this.applyLifecycle(request, event);
    return true;
  }

  private applyLifecycle(request: AttentionRequest, event: AepObject): void {
    if (text(event.type) === 'attention.answered') request.answered = event;
    else request.terminal = event;
  }

  /** Open requests (no terminal yet), newest first. */
  open(): AttentionRequest[] {
    return [...this.requests.values()].filter((request) => request.terminal === undefined).sort(newestFirst);
  }

  /** Closed requests, newest first (the inbox shows a few, so an answer's end is visible). */
  closed(): AttentionRequest[] {
    return [...this.requests.values()].filter((request) => request.terminal !== undefined).sort(newestFirst);
  }

  get(id: string): AttentionRequest | undefined {
    return this.requests.get(id);
  }
}

function newestFirst(a: AttentionRequest, b: AttentionRequest): number {
  // By the time the emitter stated (RFC 3339, any offset); the id breaks ties.
  const byTime = (Date.parse(b.time) || 0) - (Date.parse(a.time) || 0);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
