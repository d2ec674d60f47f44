/** The AEP-0002 §5.2 common payload objects, and member shapes several registered types share, as specs for the payload table. */
import type { PayloadField, PayloadProperties } from './payload-field.ts';
import { count, decimal, flag, integer, list, object, oneOf, opaqueObject, required, text } from './payload-field-builders.ts';

export const toolRef = (): PayloadField =>
  object({ name: required(text()), call_id: text() }, 'metadata', { commonObject: 'tool_ref' });

export const errorInfo = (): PayloadField =>
  object({ type: text(), message: text('redacted') }, 'metadata', { commonObject: 'error_info' });

// Amounts are non-negative decimals in one currency; currency is mandatory (AEP-0002 §5.2 cost).
export const cost = (): PayloadField =>
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
export const usage = (): PayloadProperties => ({
  'gen_ai.usage.input_tokens': count(),
  'gen_ai.usage.output_tokens': count(),
});

// Provenance is metadata; the retrieved text is gated in two forms (AEP-0002 §5.2 document).
export const documentList = (): PayloadField =>
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

export const lineage = (sessionRequired: boolean): PayloadField =>
  object({ session: sessionRequired ? required(text()) : text(), run: text(), agent: text() });

export const task = (): PayloadField => object({ id: text(), title: text('redacted') });

// An answer as carried by attention.answered and the control.attention.respond command.
// `values` is gated per key by the referenced field_spec type (AEP-0006); a hop lacks that
// context, so below `redacted` it keeps only the kinds that can never be prose.
export const answer = (): PayloadField =>
  required(
    object({
      option: text(),
      text: text('redacted'),
      values: { ...opaqueObject('metadata'), metadataException: 'structural-values' },
    }),
  );

// Labels are `[metadata*]`: a structural placeholder at metadata, real text at redacted+.
export const labelledChoice = (): PayloadField =>
  object({
    id: required(text()),
    label: required(text('metadata', { metadataException: 'label-from-id' })),
  });

// AEP-0002 §5.2 field_spec (AEP-0006): flat typed form fields; a select needs its choices.
export const fieldSpec = (): PayloadField =>
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
export const citation = (): PayloadField =>
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
export const guardrail = (): PayloadField =>
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
