// Engine argument errors: every bad call is E_INVALID_ARGUMENT (or E_ENGINE_UNAVAILABLE for
// an engine kind) with a message naming the culprit, the sequence's state is untouched, and
// the engine keeps computing the same logits afterwards.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeEngine } from '../../native/index.js';
import { PROMPT, addon, expectEngineError, expectEngineRejects, expectHealthy, fixture, openEngine, tempDir } from './helpers/engine-helpers.js';

const GREEDY = { temperature: 0, topK: 0, topP: 1, seed: 0 };
const tmp = tempDir('engine-arguments');
let engine: NativeEngine;
let seq: number;
let baseline: Float32Array; // logits of decoding token 7 after PROMPT

beforeAll(async () => {
  engine = openEngine(fixture('qwen35-tiny'));
  const ref = engine.createSequence();
  await engine.prefill(ref, PROMPT);
  baseline = await engine.decode(Int32Array.of(ref), Int32Array.of(7));
  engine.freeSequence(ref);
  seq = engine.createSequence();
  await engine.prefill(seq, PROMPT);
});
afterAll(() => {
  engine?.close();
  tmp.cleanup();
});

/** The sequence under test was not advanced by a failed call: its next decode still matches the baseline. */
async function expectSequenceIntact(): Promise<void> {
  expect(engine.sequenceLength(seq)).toBe(PROMPT.length);
  expect(engine.sequenceTokens(seq)).toEqual(PROMPT);
  const probe = engine.createSequence();
  await engine.prefill(probe, engine.sequenceTokens(seq));
  expect(await engine.decode(Int32Array.of(probe), Int32Array.of(7))).toEqual(baseline);
  engine.freeSequence(probe);
}

describe('token ids', () => {
  it.each([512, -1, 2 ** 31 - 1, -(2 ** 31)])('prefill with token id %i', async (bad) => {
    await expectEngineRejects(() => engine.prefill(seq, Int32Array.of(1, 2, bad)), 'E_INVALID_ARGUMENT', `token id ${bad} at index 2`, 'outside the vocabulary [0, 512)');
    await expectSequenceIntact();
  });

  it.each([512, -1])('decode with token id %i', async (bad) => {
    const other = engine.createSequence();
    await expectEngineRejects(() => engine.decode(Int32Array.of(other, seq), Int32Array.of(3, bad)), 'E_INVALID_ARGUMENT', `token id ${bad} at index 1`);
    expect(engine.sequenceLength(other)).toBe(0);
    engine.freeSequence(other);
    await expectSequenceIntact();
  });
});

describe('sequence ids', () => {
  it('an unknown sequence id is named by every method', async () => {
    const msg = 'unknown sequence 999';
    await expectEngineRejects(() => engine.prefill(999, Int32Array.of(1)), 'E_INVALID_ARGUMENT', msg);
    await expectEngineRejects(() => engine.decode(Int32Array.of(999), Int32Array.of(1)), 'E_INVALID_ARGUMENT', msg);
    await expectEngineRejects(() => engine.decode(Int32Array.of(seq, 999), Int32Array.of(1, 1)), 'E_INVALID_ARGUMENT', msg);
    expectEngineError(() => engine.freeSequence(999), 'E_INVALID_ARGUMENT', msg);
    expectEngineError(() => engine.sequenceLength(999), 'E_INVALID_ARGUMENT', msg);
    expectEngineError(() => engine.sequenceTokens(999), 'E_INVALID_ARGUMENT', msg);
    await expectSequenceIntact();
  });

  it('a freed sequence is unknown afterwards', async () => {
    const s = engine.createSequence();
    engine.freeSequence(s);
    expectEngineError(() => engine.freeSequence(s), 'E_INVALID_ARGUMENT', `unknown sequence ${s}`);
    await expectEngineRejects(() => engine.prefill(s, Int32Array.of(1)), 'E_INVALID_ARGUMENT', `unknown sequence ${s}`);
  });

  it.each([1.5, Number.NaN, '1', undefined, 2 ** 40])('a sequence id that is not an int32 (%s)', (bad) => {
    expectEngineError(() => engine.sequenceLength(bad as number), 'E_INVALID_ARGUMENT', 'seq must be an integer');
  });

  it('a sequence twice in one decode', async () => {
    await expectEngineRejects(() => engine.decode(Int32Array.of(seq, seq), Int32Array.of(1, 2)), 'E_INVALID_ARGUMENT', `sequence ${seq} appears twice`);
    await expectSequenceIntact();
  });
});

describe('batches', () => {
  it('an empty prefill', async () => {
    await expectEngineRejects(() => engine.prefill(seq, new Int32Array(0)), 'E_INVALID_ARGUMENT', 'at least one token');
    await expectSequenceIntact();
  });

  it('an empty decode', async () => {
    await expectEngineRejects(() => engine.decode(new Int32Array(0), new Int32Array(0)), 'E_INVALID_ARGUMENT', 'at least one sequence');
  });

  it('mismatched seqs and tokens lengths', async () => {
    await expectEngineRejects(() => engine.decode(Int32Array.of(seq), Int32Array.of(1, 2)), 'E_INVALID_ARGUMENT', 'same length');
    await expectSequenceIntact();
  });

  it.each([
    ['an Array', [1, 2]],
    ['a Uint32Array', Uint32Array.of(1, 2)],
    ['a Float32Array', Float32Array.of(1, 2)],
    ['a Buffer', Buffer.from([1, 2])],
    ['undefined', undefined],
  ])('prefill and decode with %s instead of an Int32Array', async (_what, bad) => {
    await expectEngineRejects(() => engine.prefill(seq, bad as unknown as Int32Array), 'E_INVALID_ARGUMENT', 'tokens must be an Int32Array');
    await expectEngineRejects(() => engine.decode(bad as unknown as Int32Array, Int32Array.of(1)), 'E_INVALID_ARGUMENT', 'seqs must be an Int32Array');
    await expectEngineRejects(() => engine.decode(Int32Array.of(seq), bad as unknown as Int32Array), 'E_INVALID_ARGUMENT', 'tokens must be an Int32Array');
    await expectSequenceIntact();
  });

  it('bad prefill options', async () => {
    await expectEngineRejects(() => engine.prefill(seq, Int32Array.of(1), { chunkSize: 0 }), 'E_INVALID_ARGUMENT', 'chunk size');
    await expectEngineRejects(() => engine.prefill(seq, Int32Array.of(1), { chunkSize: 1.5 }), 'E_INVALID_ARGUMENT', 'chunkSize');
    await expectEngineRejects(() => engine.prefill(seq, Int32Array.of(1), { allLogits: 'yes' as unknown as boolean }), 'E_INVALID_ARGUMENT', 'allLogits');
    await expectEngineRejects(() => engine.prefill(seq, Int32Array.of(1), 5 as never), 'E_INVALID_ARGUMENT', 'options');
    await expectSequenceIntact();
  });

  it('a failing call next to a good one in flight: the good one completes', async () => {
    const s = engine.createSequence();
    const [good, bad] = await Promise.allSettled([
      engine.prefill(s, PROMPT),
      engine.decode(Int32Array.of(seq, seq), Int32Array.of(1, 1)),
    ]);
    expect(good.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    expect(engine.sequenceLength(s)).toBe(PROMPT.length);
    engine.freeSequence(s);
    await expectSequenceIntact();
  });
});

describe('paths', () => {
  it('a path with a NUL byte is refused, not silently cut short (which would open another file)', async () => {
    const good = join(tmp.dir, 'nul.state');
    await engine.exportState(seq, good);
    await expectEngineRejects(() => engine.importState(`${good}\0.bak`), 'E_INVALID_ARGUMENT', 'path', 'NUL');
    await expectEngineRejects(() => engine.exportState(seq, `${good}\0.bak`), 'E_INVALID_ARGUMENT', 'path', 'NUL');
    expectEngineError(() => new addon.Engine(`${fixture('qwen35-tiny')}\0x`), 'E_INVALID_ARGUMENT', 'modelDir', 'NUL');
    expectEngineError(() => addon.inspectStateFile(`${good}\0x`), 'E_INVALID_ARGUMENT', 'path', 'NUL');
  });

  it('an empty path is refused', async () => {
    await expectEngineRejects(() => engine.importState(''), 'E_INVALID_ARGUMENT', 'path');
    await expectEngineRejects(() => engine.exportState(seq, ''), 'E_INVALID_ARGUMENT', 'path');
    expectEngineError(() => new addon.Engine(''), 'E_INVALID_ARGUMENT', 'modelDir');
    await expectSequenceIntact();
  });

  it('typed-array views are read from their own offset', async () => {
    const big = Int32Array.of(9, 9, 9, ...PROMPT, 9);
    const s = engine.createSequence();
    await engine.prefill(s, big.subarray(3, 3 + PROMPT.length));
    expect(engine.sequenceTokens(s)).toEqual(PROMPT);
    expect(await engine.decode(Int32Array.of(9, s, 9).subarray(1, 2), Int32Array.of(1, 7, 1).subarray(1, 2))).toEqual(baseline);
    engine.freeSequence(s);
  });
});

describe('max_position_embeddings', () => {
  it('the fixture (4096): a prefill beyond it fails before computing anything', async () => {
    const s = engine.createSequence();
    await expectEngineRejects(() => engine.prefill(s, new Int32Array(4097)), 'E_INVALID_ARGUMENT', 'would reach 4097 tokens', 'max_position_embeddings 4096');
    expect(engine.sequenceLength(s)).toBe(0);
    engine.freeSequence(s);
  });

  it('a model with max_position_embeddings 16: prefill and decode stop at the limit', async () => {
    const dir = join(tmp.dir, 'short');
    mkdirSync(dir);
    const config = JSON.parse(readFileSync(join(fixture('qwen35-tiny'), 'config.json'), 'utf8')) as Record<string, unknown>;
    config.max_position_embeddings = 16;
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    copyFileSync(join(fixture('qwen35-tiny'), 'model.safetensors'), join(dir, 'model.safetensors'));
    const short = openEngine(dir);
    try {
      expect(short.info.maxPositionEmbeddings).toBe(16);
      const s = short.createSequence();
      await expectEngineRejects(() => short.prefill(s, new Int32Array(17)), 'E_INVALID_ARGUMENT', 'max_position_embeddings 16');
      await short.prefill(s, new Int32Array(10));
      await expectEngineRejects(() => short.prefill(s, new Int32Array(7)), 'E_INVALID_ARGUMENT', 'would reach 17 tokens');
      await short.prefill(s, new Int32Array(6));
      await expectEngineRejects(() => short.decode(Int32Array.of(s), Int32Array.of(1)), 'E_INVALID_ARGUMENT', `sequence ${s} is at max_position_embeddings`);
      expect(short.sequenceLength(s)).toBe(16);
    } finally {
      short.close();
    }
  });
});

describe('engine kinds', () => {
  it("'metal' is E_ENGINE_UNAVAILABLE naming it", async () => {
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { engine: 'metal' as never, threads: 1 }), 'E_ENGINE_UNAVAILABLE', '"metal"', 'cpu');
    await expectHealthy();
  });

  it.skipIf(addon.availableEngines().includes('cuda'))("'cuda' without a GPU is E_ENGINE_UNAVAILABLE", async () => {
    expect(addon.availableEngines()).toEqual(['cpu']);
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { engine: 'cuda', threads: 1 }), 'E_ENGINE_UNAVAILABLE', 'cuda');
    await expectHealthy();
  });

  it('a non-string engine kind and bad options', () => {
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { engine: 3 as never }), 'E_INVALID_ARGUMENT', 'engine');
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), 'cpu' as never), 'E_INVALID_ARGUMENT', 'options');
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { threads: 1000 }), 'E_INVALID_ARGUMENT', 'threads');
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { device: -1 }), 'E_INVALID_ARGUMENT', 'device');
  });
});

describe('after close()', () => {
  it('every call is E_INVALID_ARGUMENT "engine is closed"; other engines are unaffected', async () => {
    const e = openEngine(fixture('qwen35-tiny'));
    const s = e.createSequence();
    await e.prefill(s, PROMPT);
    const logits = await e.decode(Int32Array.of(s), Int32Array.of(7));
    const state = join(tmp.dir, 'closed.state');
    e.close();
    e.close(); // idempotent
    const closed = 'engine is closed';
    expectEngineError(() => e.createSequence(), 'E_INVALID_ARGUMENT', closed);
    expectEngineError(() => e.freeSequence(s), 'E_INVALID_ARGUMENT', closed);
    expectEngineError(() => e.sequenceLength(s), 'E_INVALID_ARGUMENT', closed);
    expectEngineError(() => e.sequenceTokens(s), 'E_INVALID_ARGUMENT', closed);
    expectEngineError(() => e.sample(logits, 0, GREEDY, 0), 'E_INVALID_ARGUMENT', closed);
    expectEngineError(() => e.info, 'E_INVALID_ARGUMENT', closed);
    await expectEngineRejects(() => e.prefill(s, PROMPT), 'E_INVALID_ARGUMENT', closed);
    await expectEngineRejects(() => e.decode(Int32Array.of(s), Int32Array.of(1)), 'E_INVALID_ARGUMENT', closed);
    await expectEngineRejects(() => e.exportState(s, state), 'E_INVALID_ARGUMENT', closed);
    await expectEngineRejects(() => e.importState(state), 'E_INVALID_ARGUMENT', closed);
    expect(e.stats()).toEqual({ stateBytes: 0, scratchBytes: 0, sequences: 0 });
    // The shared engine of this file is untouched.
    await expectSequenceIntact();
  });

  it('closing while a prefill is in flight: the prefill finishes, later calls fail', async () => {
    const e = openEngine(fixture('qwen35-tiny'));
    const s = e.createSequence();
    const pending = e.prefill(s, PROMPT);
    e.close();
    const settled = await Promise.allSettled([pending]);
    // Either outcome is acceptable as long as it is not a crash and errors are coded.
    if (settled[0].status === 'rejected') expect((settled[0].reason as { code?: string }).code).toBe('E_INVALID_ARGUMENT');
    await expectEngineRejects(() => e.prefill(s, PROMPT), 'E_INVALID_ARGUMENT', 'engine is closed');
  });
});
