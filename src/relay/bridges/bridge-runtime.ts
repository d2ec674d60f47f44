/** What the bridges' use cases work with, built by the composition root beside the relay's other ports. */
import type { BridgeDeps } from './deliver-to-sinks.ts';

export interface BridgeRuntime extends BridgeDeps {
  /** EventBridge buses a sink may name (the deployment's grant); any other is refused at configuration. */
  allowedEventBuses: readonly string[];
}
