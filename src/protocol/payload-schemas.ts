/**
 * The relay's own typed table of every registered type's `data` payload (AEP-0002 §5.2–§5.4).
 *
 * One table serves two readers: `downlevel.ts` prunes fields above a capture level and
 * degrades the `[metadata*]` exception fields, and `conformance/payload.ts` checks value kinds, enums,
 * bounds and required members. Keeping both on one table means a field's level and its
 * shape can never drift apart. The official schemas are not shipped with the relay; the
 * test suite compares this table against them member by member.
 */
import { answer, citation, cost, documentList, errorInfo, fieldSpec, guardrail, labelledChoice, lineage, task, toolRef, usage } from './payload-common-objects.ts';
import type { PayloadProperties, PayloadSchema } from './payload-field.ts';
import { count, decimal, flag, list, object, oneOf, opaqueObject, required, text } from './payload-field-builders.ts';

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
