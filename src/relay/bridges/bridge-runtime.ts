/** What the bridges' use cases work with, built by the composition root beside the relay's other ports. */
import type { BridgeDeps } from './deliver-to-sinks.ts';
import type { SinkRules } from './sink-settings.ts';

export interface BridgeRuntime extends BridgeDeps {
  /** What a sink may name: the EventBridge buses of the deployment's grant, and the addresses it allows. */
  rules: SinkRules;
}
