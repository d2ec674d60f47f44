/**
 * The relay's own typed table of every registered type's `data` payload (AEP-0002 §5.2–§5.4).
 *
 * One table serves two readers: `downlevel.ts` prunes fields above a capture level and
 * degrades the `[metadata*]` exception fields, and `payload.ts` checks value kinds, enums,
 * bounds and required members. Keeping both on one table means a field's level and its
 * shape can never drift apart. The official schemas are not shipped with the relay; the
 * test suite compares this table against them member by member.
 */
import type { CaptureLevel } from './levels.ts';

/** A JSON value kind as payload schemas name it; `integer` is the whole-number subset of `number`. */
export type PayloadValueKind = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';

/** The minimum capture level at which a payload member may be present (AEP-0002 §5.1). */
export type FieldCaptureLevel = Exclude<CaptureLevel, 'none'>;

/**
 * How a `[metadata*]` exception field degrades when a hop lands below `redacted`
 * (AEP-0002 §5.3, AEP-0003 §9.2). A hop has no source context, so each degradation uses
 * only structure the event already carries at metadata.
 */
export type MetadataExceptionDegradation =
  /** `attention.requested.prompt`: rebuilt as `"{agent} requests {kind}: {subject}"`. */
  | 'synthesized-prompt'
  /** An option / field_spec / choice `label`: replaced by the sibling `id`. */
  | 'label-from-id'
  /** `answer.values`: only number and boolean entries survive (no field_spec at the hop). */
  | 'structural-values';

/** The §5.2 common payload object a member is an instance of, when it is one. */
export type CommonPayloadObject =
  | 'tool_ref'
  | 'error_info'
  | 'cost'
  | 'document'
  | 'citation'
  | 'guardrail'
  | 'field_spec';

/** "When member `when` equals `equals`, the members in `require` must be present." */
export interface ConditionalRequirement {
  readonly when: string;
  readonly equals: string;
  readonly require: readonly string[];
}

/** Members of a payload object, keyed by member name. Look up with `payloadField()`. */
export type PayloadProperties = Readonly<Record<string, PayloadField>>;

/** One payload member, or the item of an array member. */
export interface PayloadField {
  /** Unannotated members default to `metadata` (AEP-0002 §5.1 rule 4). */
  readonly capture: FieldCaptureLevel;
  /** Accepted value kinds; absent means any kind (e.g. an enum-only member). */
  readonly kinds?: readonly PayloadValueKind[];
  /** Required within its parent object (never set on array items). */
  readonly required?: boolean;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: 'date-time';
  /** Known members when the value is an object; unknown members are allowed (schemas are open). */
  readonly properties?: PayloadProperties;
  /** Requirements that hold only when a sibling member has a given value. */
  readonly requiredWhen?: readonly ConditionalRequirement[];
  /** The spec of every element when the value is an array. */
  readonly items?: PayloadField;
  /** Set on the `[metadata*]` exception fields only. */
  readonly metadataException?: MetadataExceptionDegradation;
  /** Set on the root node of a §5.2 common object. */
  readonly commonObject?: CommonPayloadObject;
}

/** The payload table entry of one registered type. */
export interface PayloadSchema {
  readonly type: string;
  readonly properties: PayloadProperties;
}

/** A member's spec by name, ignoring inherited keys so hostile names like `__proto__` find nothing. */
export function payloadField(properties: PayloadProperties, name: string): PayloadField | undefined {
  return Object.hasOwn(properties, name) ? properties[name] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Builders: keep the table below readable. Each returns a fresh spec object.

type Extra = Omit<PayloadField, 'capture' | 'kinds'>;

function text(capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['string'], ...extra };
}

function count(capture: FieldCaptureLevel = 'metadata'): PayloadField {
  return { capture, kinds: ['integer'], minimum: 0 };
}

function integer(): PayloadField {
  return { capture: 'metadata', kinds: ['integer'] };
}

function decimal(extra: Extra = {}): PayloadField {
  return { capture: 'metadata', kinds: ['number'], ...extra };
}

function flag(): PayloadField {
  return { capture: 'metadata', kinds: ['boolean'] };
}

function oneOf(values: readonly string[], kinds?: readonly PayloadValueKind[]): PayloadField {
  return kinds === undefined ? { capture: 'metadata', enum: values } : { capture: 'metadata', kinds, enum: values };
}

function object(properties: PayloadProperties = {}, capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['object'], properties, ...extra };
}

/** An object member whose contents are free-form (no known members). */
function opaqueObject(capture: FieldCaptureLevel): PayloadField {
  return { capture, kinds: ['object'] };
}

function list(items: PayloadField, capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['array'], items, ...extra };
}

function required(field: PayloadField): PayloadField {
  return { ...field, required: true };
}

// ---------------------------------------------------------------------------------------------
// §5.2 common objects and shapes reused by several types.

const toolRef = (): PayloadField =>
  object({ name: required(text()), call_id: text() }, 'metadata', { commonObject: 'tool_ref' });

const errorInfo = (): PayloadField =>
  object({ type: text(), message: text('redacted') }, 'metadata', { commonObject: 'error_info' });

// Amounts are non-negative decimals in one currency; currency is mandatory (AEP-0002 §5.2 cost).
const cost = (): PayloadField =>
  object(
    {
      currency: required(text()),
      total: decimal({ minimum: 0 }),
      prompt: decimal({ minimum: 0 }),
      completion: decimal({ minimum: 0 }),
      cache: decimal({ minimum: 0 }),
      reasoning: decimal({ minimum: 0 }),
    },
    'metadata',
    { commonObject: 'cost' },
  );

// The usage object is flat: its members sit directly in `data` (AEP-0002 §5.2 usage).
const usage = (): PayloadProperties => ({
  'gen_ai.usage.input_tokens': count(),
  'gen_ai.usage.output_tokens': count(),
});

// Provenance is metadata; the retrieved text is gated in two forms (AEP-0002 §5.2 document).
const documentList = (): PayloadField =>
  list(
    object(
      {
        id: text(),
        score: decimal(),
        content_redacted: text('redacted'),
        content: text('full'),
        metadata: opaqueObject('metadata'),
      },
      'metadata',
      { commonObject: 'document' },
    ),
  );

const lineage = (sessionRequired: boolean): PayloadField =>
  object({ session: sessionRequired ? required(text()) : text(), run: text(), agent: text() });

const task = (): PayloadField => object({ id: text(), title: text('redacted') });

// An answer as carried by attention.answered and the control.attention.respond command.
// `values` is gated per key by the referenced field_spec type (AEP-0006); a hop lacks that
// context, so below `redacted` it keeps only the kinds that can never be prose.
const answer = (): PayloadField =>
  required(
    object({
      option: text(),
      text: text('redacted'),
      values: { ...opaqueObject('metadata'), metadataException: 'structural-values' },
    }),
  );

// Labels are `[metadata*]`: a structural placeholder at metadata, real text at redacted+.
const labelledChoice = (): PayloadField =>
  object({
    id: required(text()),
    label: required(text('metadata', { metadataException: 'label-from-id' })),
  });

// AEP-0002 §5.2 field_spec (AEP-0006): flat typed form fields; a select needs its choices.
const fieldSpec = (): PayloadField =>
  object(
    {
      id: required(text()),
      type: required(oneOf(['string', 'number', 'boolean', 'select'])),
      label: required(text('metadata', { metadataException: 'label-from-id' })),
      required: flag(),
      multi: flag(),
      other: flag(),
      choices: list(labelledChoice()),
      min: decimal(),
      max: decimal(),
    },
    'metadata',
    {
      commonObject: 'field_spec',
      requiredWhen: [{ when: 'type', equals: 'select', require: ['choices'] }],
    },
  );

const citationOffsetSpan = (anchor?: string): PayloadField =>
  object({ ...(anchor === undefined ? {} : { [anchor]: integer() }), start: integer(), end: integer() });

// AEP-0002 §5.2 citation: the source ref and offset are the fact; quoted text is gated.
const citation = (): PayloadField =>
  object(
    {
      source: object({ id: text(), uri: text('redacted'), title: text('redacted') }),
      cited_text_redacted: text('redacted'),
      cited_text: text('full'),
      offset: object({
        char: citationOffsetSpan(),
        page: citationOffsetSpan('page'),
        block: citationOffsetSpan('block'),
      }),
      document_index: count(),
    },
    'metadata',
    { commonObject: 'citation' },
  );

// AEP-0002 §5.2 guardrail: verdict facts are metadata; the rationale may quote content.
const guardrail = (): PayloadField =>
  object(
    {
      stage: oneOf(['input', 'output'], ['string']),
      verdict: oneOf(['allowed', 'flagged', 'blocked', 'modified'], ['string']),
      categories: list(object({ name: text(), score: decimal() })),
      detector: object({ name: text(), version: text() }),
      explanation: text('redacted'),
    },
    'metadata',
    { commonObject: 'guardrail' },
  );

// ---------------------------------------------------------------------------------------------
// The table: AEP-0002 §5.3 (mandatory types), §5.4 (optional types), AEP-0004 (control).

const tableEntries: ReadonlyArray<readonly [string, PayloadProperties]> = [
  // Session lifecycle.
  [
    'session.started',
    {
      label: text('redacted'),
      parent: lineage(true),
      client: object({ name: required(text()), version: text() }),
      'gen_ai.request.model': text(),
      cwd: text('redacted'),
    },
  ],
  [
    'session.ended',
    {
      reason: oneOf(['normal', 'error', 'timeout', 'killed', 'compaction']),
      duration_ms: count(),
      runs: count(),
    },
  ],
  [
    'session.compacted',
    {
      trigger: text(),
      strategy: text(),
      estimated_token_count: count(),
      forgotten: count(),
      ...usage(),
    },
  ],

  // Runs and steps.
  [
    'run.started',
    {
      trigger: oneOf(['user', 'schedule', 'agent', 'control', 'resume']),
      prompt: text('redacted'),
      ...usage(),
      cost: cost(),
    },
  ],
  [
    'run.finished',
    {
      duration_ms: count(),
      summary: text('redacted'),
      ...usage(),
      cost: cost(),
    },
  ],
  ['run.failed', { reason: required(text()), error: errorInfo(), duration_ms: count() }],
  [
    'run.cancelled',
    {
      by: oneOf(['user', 'control', 'policy', 'shutdown']),
      reason: text('redacted'),
      duration_ms: count(),
    },
  ],
  ['run.step.started', { name: text('redacted'), initial_num_steps: count() }],
  ['run.step.finished', { status: text() }],

  // Tools.
  [
    'tool.requested',
    {
      tool: required(toolRef()),
      args_digest: text(),
      args_redacted: opaqueObject('redacted'),
      args: opaqueObject('full'),
    },
  ],
  [
    'tool.completed',
    {
      tool: required(toolRef()),
      duration_ms: count(),
      status: text(),
      result_digest: text(),
      result_redacted: { capture: 'redacted', kinds: ['object', 'string'] },
      result: { capture: 'full', kinds: ['object', 'string'] },
      ...usage(),
      cost: cost(),
    },
  ],
  ['tool.failed', { tool: required(toolRef()), error: required(errorInfo()), duration_ms: count() }],
  [
    'tool.denied',
    {
      tool: required(toolRef()),
      by: required(oneOf(['policy', 'user_setting', 'runtime'])),
      rule: text(),
    },
  ],

  // The attention lifecycle (AEP-0002 §7) and structured input (AEP-0006).
  [
    'attention.requested',
    {
      kind: required(oneOf(['permission', 'input', 'auth', 'review', 'form', 'other'])),
      prompt: required(text('metadata', { metadataException: 'synthesized-prompt' })),
      options: list(labelledChoice()),
      fields: list(fieldSpec()),
      expires_at: text('metadata', { format: 'date-time' }),
      respond_via: list(oneOf(['control', 'oob'])),
      context: opaqueObject('full'),
    },
  ],
  ['attention.answered', { answer: answer(), by: text(), via: oneOf(['control', 'oob']) }],
  ['attention.resolved', { resolution: required(oneOf(['answered', 'auto', 'dismissed'])), latency_ms: count() }],
  ['attention.timeout', { after_ms: count() }],
  ['attention.routed', { to: text(), via: text() }],

  // Progress.
  ['progress.status', { message: text('redacted'), phase: text(), percent: decimal({ minimum: 0, maximum: 100 }) }],
  ['progress.task.planned', { task: task(), parent: text() }],
  ['progress.task.completed', { task: task(), status: text() }],
  [
    'progress.artifact.produced',
    {
      artifact: object({
        id: text(),
        name: text('redacted'),
        mime: text(),
        bytes: count(),
        uri: text('redacted'),
      }),
    },
  ],

  // Delegation.
  ['delegation.subagent.started', { child: lineage(false), agent_type: text(), role: text() }],
  [
    'delegation.subagent.stopped',
    { child: lineage(false), agent_type: text(), status: text(), duration_ms: count() },
  ],

  // Agent-scoped.
  ['agent.presence', { state: required(oneOf(['online', 'offline', 'busy'])) }],
  ['agent.idle', { since_ms: count(), reason: text() }],
  ['agent.health', { status: required(oneOf(['ok', 'degraded', 'failing'])), detail: text('redacted') }],
  ['agent.heartbeat', { tick: count(), interval_ms: count() }],

  // Errors and state.
  ['error.raised', { error: errorInfo(), code: text(), fatal: flag() }],
  ['state.snapshot', { state: opaqueObject('redacted'), key: text(), rev: count() }],
  ['state.delta', { delta: list(opaqueObject('metadata'), 'redacted'), key: text(), rev: count() }],

  // Resources (experimental).
  ['resource.retrieval.requested', { query: text('redacted'), query_digest: text(), corpus: text(), top_k: count() }],
  ['resource.retrieval.returned', { documents: documentList(), count: count(), corpus: text(), duration_ms: count() }],
  [
    'resource.retrieval.reranked',
    {
      query: text('redacted'),
      query_digest: text(),
      model: text(),
      top_k: count(),
      input_documents: documentList(),
      output_documents: documentList(),
      count: count(),
      duration_ms: count(),
    },
  ],
  ['resource.citation.recorded', { citations: list(citation()), count: count() }],

  // Assessments (experimental, AEP-0009).
  [
    'assessment.evaluation.recorded',
    {
      'gen_ai.evaluation.name': text(),
      'gen_ai.evaluation.score.value': decimal(),
      'gen_ai.evaluation.score.label': text(),
      'gen_ai.evaluation.explanation': text('redacted'),
      evaluator: text(),
    },
  ],
  [
    'assessment.feedback.received',
    {
      rating: decimal(),
      label: text(),
      comment: text('redacted'),
      correction: text('redacted'),
      source: text(),
    },
  ],
  ['assessment.guardrail.recorded', { guardrail: guardrail() }],

  // Control commands and acknowledgements (AEP-0004).
  ['control.attention.respond', { answer: answer() }],
  ['control.cancel', { scope: required(oneOf(['run', 'session'])), reason: text('redacted') }],
  ['control.pause', {}],
  ['control.resume', {}],
  ['control.accepted', {}],
  [
    'control.rejected',
    {
      reason: required(oneOf(['unsupported', 'unauthorized', 'busy', 'refused', 'invalid'])),
      detail: text('redacted'),
    },
  ],
];

/** Every registered type that has a payload schema, keyed by type name. */
export const PAYLOAD_SCHEMAS: ReadonlyMap<string, PayloadSchema> = new Map(
  tableEntries.map(([type, properties]) => [type, { type, properties }]),
);

/** The payload table entry of a registered type; undefined for unregistered (incl. `x.*`) types. */
export function payloadSchemaFor(type: string): PayloadSchema | undefined {
  return PAYLOAD_SCHEMAS.get(type);
}
