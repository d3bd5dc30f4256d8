// make-model writes folders the engine loads: the real Qwen3.5 checkpoint form (text_config,
// model.language_model.* names) and Qwen3, with every tensor bound and finite logits out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeModel } from '../../daemon/cli/make-model.js';
import { loadAddon } from '../../native/index.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-mm-engine-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each([
  ['qwen3.5-0.8b', 'qwen3_5', 4],
  ['qwen3-0.6b', 'qwen3', 2],
] as const)('%s', (preset, architecture, layers) => {
  it('loads in the engine, prefills, decodes and round-trips its state', async () => {
    const dir = join(root, preset);
    const made = await makeModel({ preset, dtype: 'bf16', out: dir, seed: 5, layers, vocabSize: 1024 });
    const engine = new (loadAddon().Engine)(dir, { threads: 2 });
    try {
      expect(engine.info.architecture).toBe(architecture);
      expect(engine.info.weightDtype).toBe('bf16');
      expect(engine.info.parameterCount).toBe(made.parameters);
      expect(engine.info.numLayers).toBe(layers);
      const seq = engine.createSequence();
      const logits = await engine.prefill(seq, Int32Array.from({ length: 40 }, (_, i) => (i * 37) % 1024));
      expect(logits.length).toBe(1024);
      expect(logits.every(Number.isFinite)).toBe(true);
      const path = join(root, `${preset}.state`);
      await engine.exportState(seq, path);
      const copy = await engine.importState(path);
      const a = await engine.decode(Int32Array.of(seq), Int32Array.of(7));
      const b = await engine.decode(Int32Array.of(copy), Int32Array.of(7));
      expect(Array.from(b)).toEqual(Array.from(a));
    } finally {
      engine.close();
    }
  });
});
