// Bad model folders, config.json side: every failure is E_MODEL_CONFIG naming the file and
// the field, and a good engine still loads and runs afterwards.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addon, copyModel, expectEngineError, expectHealthy, expectModelError, fixture, openEngine, tempDir } from './helpers/engine-helpers.js';

const tmp = tempDir('config-errors');
afterAll(tmp.cleanup);

const baseConfig = JSON.parse(readFileSync(join(fixture('qwen35-tiny'), 'config.json'), 'utf8')) as Record<string, unknown>;
let n = 0;

/** A model folder with the fixture's weights and config.json replaced by `text` (or removed when undefined). */
function folderWithConfigText(text: string | undefined): string {
  const dir = join(tmp.dir, `m${n++}`);
  mkdirSync(dir);
  copyModel('qwen35-tiny', dir);
  if (text === undefined) rmSync(join(dir, 'config.json'));
  else writeFileSync(join(dir, 'config.json'), text);
  return dir;
}

function folderWithConfig(edit: (c: Record<string, unknown>) => void): string {
  const c = structuredClone(baseConfig);
  edit(c);
  return folderWithConfigText(JSON.stringify(c, null, 2));
}

describe('model folder and config.json', () => {
  it('a missing folder names the folder', async () => {
    const dir = join(tmp.dir, 'does-not-exist');
    await expectModelError(dir, 'E_MODEL_CONFIG', dir, 'config.json');
  });

  it('a folder without config.json names config.json', async () => {
    const dir = folderWithConfigText(undefined);
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'));
  });

  it('config.json that is not JSON', async () => {
    const dir = folderWithConfigText('{"model_type": "qwen3_5_text", "hidden_size": 64,');
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), /not valid JSON/);
  });

  it('config.json that is JSON but not an object', async () => {
    const dir = folderWithConfigText('[1, 2, 3]');
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), /not a JSON object/);
  });

  it('an unknown model_type is named', async () => {
    const dir = folderWithConfig((c) => (c.model_type = 'llama'));
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), '"llama"', 'model_type');
  });

  it('a missing model_type', async () => {
    const dir = folderWithConfig((c) => delete c.model_type);
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), 'model_type', 'missing');
  });

  it.each(['hidden_size', 'vocab_size', 'num_hidden_layers', 'intermediate_size', 'num_attention_heads', 'linear_num_key_heads'])(
    'a missing required field: %s',
    async (field) => {
      const dir = folderWithConfig((c) => delete c[field]);
      await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), `field ${field} is missing`);
    },
  );

  it.each([
    ['num_hidden_layers', 100000],
    ['hidden_size', -64],
    ['hidden_size', 64.5],
    ['hidden_size', '64'],
    ['vocab_size', 0],
    ['num_attention_heads', 0],
  ] as const)('an absurd value: %s = %j', async (field, value) => {
    const dir = folderWithConfig((c) => (c[field] = value));
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), `field ${field}`, /must be an integer in \[/);
  });

  it('num_attention_heads not divisible by num_key_value_heads', async () => {
    const dir = folderWithConfig((c) => (c.num_key_value_heads = 3));
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), 'num_key_value_heads', 'must divide num_attention_heads');
  });

  it('linear value heads not a multiple of linear key heads', async () => {
    const dir = folderWithConfig((c) => (c.linear_num_value_heads = 3));
    await expectModelError(dir, 'E_MODEL_CONFIG', 'linear_num_value_heads');
  });

  it('layer_types of the wrong length', async () => {
    const dir = folderWithConfig((c) => (c.layer_types = ['full_attention']));
    await expectModelError(dir, 'E_MODEL_CONFIG', 'layer_types', 'num_hidden_layers');
  });

  it('an unknown layer type is named', async () => {
    const dir = folderWithConfig((c) => ((c.layer_types as string[])[1] = 'sliding_attention'));
    await expectModelError(dir, 'E_MODEL_CONFIG', 'layer_types', '"sliding_attention"');
  });

  it('an unsupported rope_type is named', async () => {
    const dir = folderWithConfig((c) => ((c.rope_parameters as Record<string, unknown>).rope_type = 'yarn'));
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'config.json'), 'rope_type', '"yarn"');
  });

  it('an unsupported activation', async () => {
    const dir = folderWithConfig((c) => (c.hidden_act = 'gelu'));
    await expectModelError(dir, 'E_MODEL_CONFIG', 'hidden_act');
  });

  it('a bad eos_token_id in generation_config.json', async () => {
    const dir = folderWithConfig(() => {});
    writeFileSync(join(dir, 'generation_config.json'), '{"eos_token_id": 100000}');
    await expectModelError(dir, 'E_MODEL_CONFIG', 'eos_token_id', '100000', /outside the vocabulary/);
  });

  it('generation_config.json that is not JSON', async () => {
    const dir = folderWithConfig(() => {});
    writeFileSync(join(dir, 'generation_config.json'), '{eos');
    await expectModelError(dir, 'E_MODEL_CONFIG', join(dir, 'generation_config.json'));
  });

  it('a non-string model folder is E_INVALID_ARGUMENT', async () => {
    expectEngineError(() => new addon.Engine(42 as unknown as string), 'E_INVALID_ARGUMENT', 'modelDir');
    expectEngineError(() => new addon.Engine(fixture('qwen35-tiny'), { threads: -1 }), 'E_INVALID_ARGUMENT', 'threads');
  });

  it('the unchanged copy still loads (the edits, not the copying, made the failures)', async () => {
    const engine = openEngine(folderWithConfig(() => {}));
    expect(engine.info.numLayers).toBe(4);
    engine.close();
    await expectHealthy();
  });
});
