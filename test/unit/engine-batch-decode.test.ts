// One decode step over several sequences at different positions gives each exactly the
// logits it gets when decoded alone (continuous batching relies on this).
import { expect, it } from 'vitest';
import { loadAddon } from '../../native/index.js';
import { compareLogits, loadReference } from '../helpers/fixtures.js';

it.each(['qwen35-tiny', 'qwen3-tiny'] as const)('%s: batched decode equals single decode', async (name) => {
  const ref = loadReference(name);
  const engine = new (loadAddon().Engine)(ref.dir, { threads: 2 });
  try {
    const prompts = [ref.inputIds, ref.inputIds.slice(0, 9), ref.inputIds.slice(30, 95)];
    const batch = [];
    const solo = [];
    for (const p of prompts) {
      const a = engine.createSequence();
      const b = engine.createSequence();
      await engine.prefill(a, Int32Array.from(p));
      await engine.prefill(b, Int32Array.from(p));
      batch.push(a);
      solo.push(b);
    }
    for (let step = 0; step < 4; step++) {
      const feed = prompts.map((_, i) => (step * 31 + i * 7) % ref.vocab);
      const together = await engine.decode(Int32Array.from(batch), Int32Array.from(feed));
      for (let i = 0; i < prompts.length; i++) {
        const alone = await engine.decode(Int32Array.of(solo[i] as number), Int32Array.of(feed[i] as number));
        const row = together.subarray(i * ref.vocab, (i + 1) * ref.vocab);
        expect(compareLogits(row, alone, ref.vocab, 0).maxAbsDiff).toBeLessThanOrEqual(1e-5);
      }
    }
    expect(engine.sequenceLength(batch[1] as number)).toBe(9 + 4);
    expect(Array.from(engine.sequenceTokens(batch[1] as number)).slice(0, 9)).toEqual(prompts[1]);
  } finally {
    engine.close();
  }
});
