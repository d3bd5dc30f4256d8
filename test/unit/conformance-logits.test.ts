// The CPU engine against transformers on every fixture: prefill and greedy decode logits
// (max |Δ| ≤ 1e-3, same argmax outside near-ties, identical decode tokens), through one
// engine and through a state-file handoff between two engine instances at several splits.
import { describe, expect, it } from 'vitest';
import { computeLogits } from '../../daemon/cli/logits.js';
import { MODEL_FIXTURES, compareLogits, loadReference } from '../helpers/fixtures.js';

const TOL = 1e-3;
const TIE_GAP = 2e-3;

describe.each(MODEL_FIXTURES)('%s', (name) => {
  const ref = loadReference(name);
  const T = ref.inputIds.length;
  const splits = [...new Set([undefined, ref.split, 1, 63, 64, 65, T - 1])];

  it.each(splits.map((s) => [s ?? 'none', s] as const))('matches transformers with split %s', async (_label, split) => {
    const r = await computeLogits({
      model: ref.dir,
      tokens: ref.inputIds,
      split,
      decode: ref.decodeTokens.length,
      engine: 'cpu',
      decodeEngine: 'cpu',
      threads: 2,
      chunk: 512,
    });
    const pre = compareLogits(r.prefillLogits, ref.prefillLogits, ref.vocab, TIE_GAP);
    const dec = compareLogits(r.decodeLogits, ref.decodeLogits, ref.vocab, TIE_GAP);
    expect(pre.maxAbsDiff).toBeLessThanOrEqual(TOL);
    expect(dec.maxAbsDiff).toBeLessThanOrEqual(TOL);
    expect(pre.argmaxMismatches).toEqual([]);
    expect(dec.argmaxMismatches).toEqual([]);
    expect(Array.from(r.decodeTokens)).toEqual(ref.decodeTokens);
  });

  it('gives the same logits whatever the prefill chunk size', async () => {
    for (const chunk of [1, 7, 64]) {
      const r = await computeLogits({
        model: ref.dir,
        tokens: ref.inputIds,
        decode: 2,
        engine: 'cpu',
        decodeEngine: 'cpu',
        threads: 1,
        chunk,
      });
      expect(compareLogits(r.prefillLogits, ref.prefillLogits, ref.vocab, TIE_GAP).maxAbsDiff).toBeLessThanOrEqual(TOL);
    }
  });

  it('teacher-forced decoding reports the argmax and feeds the forced tokens', async () => {
    // Force a continuation that differs from the greedy one after step 0: the logits then
    // differ from the reference's, while decode_tokens[0] is still the true argmax.
    const forced = ref.decodeTokens.map((t, i) => (i === 0 ? t : (t + 1) % ref.vocab));
    const r = await computeLogits({
      model: ref.dir,
      tokens: ref.inputIds,
      decode: forced.length,
      force: forced,
      engine: 'cpu',
      decodeEngine: 'cpu',
      threads: 2,
      chunk: 512,
    });
    expect(r.decodeTokens[0]).toBe(ref.decodeTokens[0]);
    const firstStep = compareLogits(r.decodeLogits.subarray(0, ref.vocab), ref.decodeLogits.subarray(0, ref.vocab), ref.vocab, TIE_GAP);
    expect(firstStep.maxAbsDiff).toBeLessThanOrEqual(TOL);
    const later = compareLogits(r.decodeLogits.subarray(ref.vocab * 2, ref.vocab * 3), ref.decodeLogits.subarray(ref.vocab * 2, ref.vocab * 3), ref.vocab, TIE_GAP);
    expect(later.maxAbsDiff).toBeGreaterThan(TOL);
    // With the reference's own tokens forced, everything matches again.
    const same = await computeLogits({
      model: ref.dir,
      tokens: ref.inputIds,
      decode: ref.decodeTokens.length,
      force: ref.decodeTokens,
      engine: 'cpu',
      decodeEngine: 'cpu',
      threads: 2,
      chunk: 512,
    });
    expect(compareLogits(same.decodeLogits, ref.decodeLogits, ref.vocab, TIE_GAP).maxAbsDiff).toBeLessThanOrEqual(TOL);
    expect(Array.from(same.decodeTokens)).toEqual(ref.decodeTokens);
  });
});
