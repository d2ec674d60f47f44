/** Who the console's commands are from (console/src/sender-identity.ts). */
import { describe, expect, it } from 'vitest';
import { sourceAgentOf } from '../../src/relay/domain/agent-binding.ts';
import { senderIdentityOf } from '../../console/src/sender-identity.ts';

describe('the console sender identity', () => {
  it('is console for an unbound token, and the first bound agent otherwise, with a source naming it', () => {
    expect(senderIdentityOf(undefined)).toEqual({ agent: 'console', source: 'aep://console/agent/console' });
    expect(senderIdentityOf(['ops-desk', 'ops-phone'])).toEqual({ agent: 'ops-desk', source: 'aep://console/agent/ops-desk' });
  });

  it("gives a source whose agent segment the relay's binding check reads back as the agent", () => {
    for (const agent of ['ops/phone', 'ops phone', 'émile', 'a%b']) {
      const identity = senderIdentityOf([agent]);
      expect(sourceAgentOf(identity.source)).toBe(agent);
    }
  });
});
