/** The CLI's lines for bridges: sink settings without secrets, signing secrets only where minted. */
import type { DeadLetterView, SinkSetChange } from '../../src/admin/bridge-admin.ts';
import type { SinkSettings } from '../../src/relay/bridges/sink-settings.ts';

/** Printed (to stderr) when `bridges set` minted webhook signing secrets. */
export const SIGNING_SECRET_WARNING = 'warning: each signing secret is shown once (it is stored sealed and never listed); give it to the receiver now';

export function sinkLines(sinks: readonly SinkSettings[]): string[] {
  if (sinks.length === 0) return ['no bridge sinks'];
  return sinks.map((sink) =>
    [
      sink.name,
      sink.kind,
      sink.target,
      `maxCapture=${sink.maxCapture}`,
      ...(sink.types === undefined ? [] : [`types=${sink.types.join(',')}`]),
      ...(sink.headerNames === undefined || sink.headerNames.length === 0 ? [] : [`headers=${sink.headerNames.join(',')}`]),
    ].join('  '),
  );
}

export function sinkSetLines(change: SinkSetChange): string[] {
  return [...sinkLines(change.sinks), ...Object.entries(change.signingSecrets).map(([name, secret]) => `signing secret of ${name}: ${secret}`)];
}

export function deadLetterLines(letters: readonly DeadLetterView[]): string[] {
  if (letters.length === 0) return ['no dead letters'];
  return letters.map((letter) => `${letter.id}  ${letter.sink}  ${letter.failedAt}  ${letter.eventIds.length} events  ${letter.reason}`);
}
