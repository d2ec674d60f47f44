/**
 * The local stack's usage counters keep the deliveries of the longest fan-out invocation as the
 * posts answered while it ran, whatever records its batch held (the bench's longest-invocation
 * ratio divides by them).
 */
import { describe, expect, it } from 'vitest';
import { UsageCounters } from '../../local/usage.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('usage counters: the longest fan-out invocation', () => {
  it('keeps the posts answered while the longest fan-out invocation ran, not those of shorter ones or other functions', async () => {
    const usage = new UsageCounters();
    usage.post(200);
    await usage.invoke('fanout', async () => {
      for (let post = 0; post < 3; post += 1) usage.post(200);
    });
    await usage.invoke('fanout', async () => {
      for (let post = 0; post < 7; post += 1) usage.post(post === 0 ? 410 : 200);
      await pause(30);
    });
    await usage.invoke('fanout', async () => {
      usage.post(200);
    });
    // A longer invocation of another function leaves fan-out's figure alone.
    await usage.invoke('fanoutlane', async () => {
      usage.post(200);
      await pause(60);
    });
    const snapshot = usage.snapshot();
    expect(snapshot.fanoutLongestInvocationPosts).toBe(7);
    expect(snapshot.postToConnection.calls).toBe(13);
    usage.reset();
    expect(usage.snapshot().fanoutLongestInvocationPosts).toBe(0);
  });
});
