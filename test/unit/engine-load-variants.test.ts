// Other valid forms of a model folder: the Qwen3.5 multimodal layout (text_config,
// model.language_model.* tensors, vision and MTP tensors to ignore) and f16 weights.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROMPT, fixture, maxAbsDiff, openEngine, prefillLogits, readAllF32, tempDir, writeF32Tensors } from './helpers/engine-helpers.js';

const tmp = tempDir('variants');
afterAll(tmp.cleanup);

function readConfig(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(fixture(name), 'config.json'), 'utf8')) as Record<string, unknown>;
}

/** The fixture rewritten in the multimodal (Qwen3_5ForConditionalGeneration) layout. */
async function multimodalFolder(name: string, tieAtTopLevelOnly: boolean): Promise<string> {
  const dir = join(tmp.dir, `mm-${name}`);
  mkdirSync(dir);
  const text = readConfig(name);
  const tie = text.tie_word_embeddings as boolean;
  const textConfig: Record<string, unknown> = { ...text, model_type: 'qwen3_5_text' };
  delete textConfig.architectures;
  if (tieAtTopLevelOnly) delete textConfig.tie_word_embeddings;
  const config = {
    model_type: 'qwen3_5',
    architectures: ['Qwen3_5ForConditionalGeneration'],
    tie_word_embeddings: tie,
    text_config: textConfig,
    vision_config: { model_type: 'qwen3_5', depth: 2, hidden_size: 32 },
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const tensors = readAllF32(join(fixture(name), 'model.safetensors')).map((t) =>
    t.name.startsWith('model.') ? { ...t, name: `model.language_model.${t.name.slice('model.'.length)}` } : t,
  );
  tensors.push({ name: 'model.visual.foo', shape: [4, 4], data: new Float32Array(16).fill(1) });
  tensors.push({ name: 'mtp.bar', shape: [3], data: Float32Array.of(1, 2, 3) });
  await writeF32Tensors(join(dir, 'model.safetensors'), tensors);
  return dir;
}

describe('the Qwen3.5 multimodal layout', () => {
  it.each([
    ['qwen35-tiny', false],
    ['qwen35-tiny-tied', true],
  ] as const)('%s: loads, ignores visual/mtp tensors, gives identical logits', async (name, topLevelTie) => {
    const dir = await multimodalFolder(name, topLevelTie);
    const engine = openEngine(dir);
    const plain = openEngine(fixture(name));
    try {
      expect(engine.info.modelType).toBe('qwen3_5');
      expect(engine.info.architecture).toBe('qwen3_5');
      expect(engine.info.numLayers).toBe(plain.info.numLayers);
      expect(engine.info.layerTypes).toEqual(plain.info.layerTypes);
      // The ignored tensors are not counted as the language model's.
      expect(engine.info.parameterCount).toBe(plain.info.parameterCount);
      expect(engine.info.weightBytes).toBe(plain.info.weightBytes);
    } finally {
      engine.close();
      plain.close();
    }
    const got = await prefillLogits(dir, PROMPT);
    const want = await prefillLogits(fixture(name), PROMPT);
    expect(maxAbsDiff(got, want)).toBe(0);
  });

  it('qwen3_5 without a text_config is E_MODEL_CONFIG', () => {
    const dir = join(tmp.dir, 'mm-no-text-config');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'qwen3_5', architectures: ['X'] }));
    expect(() => openEngine(dir)).toThrow(expect.objectContaining({ code: 'E_MODEL_CONFIG', message: expect.stringContaining('text_config') }));
  });
});

describe('f16 weights', () => {
  it('load and give logits within 2e-2 of the f32 engine', async () => {
    const dir = join(tmp.dir, 'f16');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), readFileSync(join(fixture('qwen35-tiny'), 'config.json')));
    await writeF32Tensors(join(dir, 'model.safetensors'), readAllF32(join(fixture('qwen35-tiny'), 'model.safetensors')), 'F16');
    const engine = openEngine(dir);
    expect(engine.info.weightDtype).toBe('f16');
    expect(engine.info.weightBytes).toBe(openEngineBytes('qwen35-tiny') / 2);
    engine.close();
    const f16 = await prefillLogits(dir, PROMPT);
    const f32 = await prefillLogits(fixture('qwen35-tiny'), PROMPT);
    const diff = maxAbsDiff(f16, f32);
    expect(diff).toBeGreaterThan(0); // really computed from rounded weights
    expect(diff).toBeLessThan(2e-2);
  });
});

function openEngineBytes(name: string): number {
  const e = openEngine(fixture(name));
  const b = e.info.weightBytes;
  e.close();
  return b;
}
