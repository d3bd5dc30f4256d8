// Sharded models (model.safetensors.index.json): a fixture split into two shards loads and
// computes exactly what the single file does; a bad index fails with E_MODEL_WEIGHTS naming
// the index, the shard or the tensor.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROMPT,
  expectModelError,
  fixture,
  maxAbsDiff,
  openEngine,
  prefillLogits,
  readAllF32,
  tempDir,
  writeF32Tensors,
} from './helpers/engine-helpers.js';

const tmp = tempDir('sharded');
afterAll(tmp.cleanup);

const NAME = 'qwen35-tiny';
const tensors = readAllF32(join(fixture(NAME), 'model.safetensors'));
const SHARDS = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const half = Math.ceil(tensors.length / 2);
const parts = [tensors.slice(0, half), tensors.slice(half)];
const weightMap: Record<string, string> = {};
parts.forEach((p, i) => p.forEach((t) => (weightMap[t.name] = SHARDS[i] as string)));

let n = 0;
/** A folder with the fixture's config, both shards, and the index produced by `index`. */
async function shardedFolder(index: (map: Record<string, string>) => unknown = (m) => ({ weight_map: m })): Promise<string> {
  const dir = join(tmp.dir, `m${n++}`);
  mkdirSync(dir);
  copyFileSync(join(fixture(NAME), 'config.json'), join(dir, 'config.json'));
  await writeF32Tensors(join(dir, SHARDS[0] as string), parts[0] as typeof tensors);
  await writeF32Tensors(join(dir, SHARDS[1] as string), parts[1] as typeof tensors);
  const body = index({ ...weightMap });
  writeFileSync(join(dir, 'model.safetensors.index.json'), typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  return dir;
}

let single: Float32Array;
beforeAll(async () => {
  single = await prefillLogits(fixture(NAME), PROMPT);
});

describe('a sharded model', () => {
  it('loads and gives identical logits to the single-file model', async () => {
    const dir = await shardedFolder((m) => ({ metadata: { total_size: 998176 }, weight_map: m }));
    const engine = openEngine(dir);
    const reference = openEngine(fixture(NAME));
    expect(engine.info.parameterCount).toBe(reference.info.parameterCount);
    expect(engine.info.weightBytes).toBe(reference.info.weightBytes);
    expect(engine.info.fingerprint).toBe(reference.info.fingerprint);
    engine.close();
    reference.close();
    const logits = await prefillLogits(dir, PROMPT);
    expect(maxAbsDiff(logits, single)).toBe(0);
  });

  it('the index wins over a stale model.safetensors next to it', async () => {
    const dir = await shardedFolder();
    writeFileSync(join(dir, 'model.safetensors'), 'stale');
    expect(maxAbsDiff(await prefillLogits(dir, PROMPT), single)).toBe(0);
  });
});

describe('a bad index', () => {
  const index = (dir: string): string => join(dir, 'model.safetensors.index.json');

  it('a shard that is missing is named', async () => {
    const dir = await shardedFolder();
    rmSync(join(dir, SHARDS[1] as string));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', join(dir, SHARDS[1] as string));
  });

  it('a shard that is truncated is named', async () => {
    const dir = await shardedFolder();
    writeFileSync(join(dir, SHARDS[0] as string), Buffer.alloc(12));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', join(dir, SHARDS[0] as string));
  });

  it('a tensor listed but absent from its shard is named', async () => {
    const dir = await shardedFolder((m) => ({ weight_map: { ...m, 'model.layers.0.mlp.extra.weight': SHARDS[0] } }));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir), 'model.layers.0.mlp.extra.weight', SHARDS[0] as string);
  });

  it('a tensor listed under the wrong shard is named', async () => {
    const moved = parts[0]?.[0]?.name as string;
    const dir = await shardedFolder((m) => ({ weight_map: { ...m, [moved]: SHARDS[1] } }));
    // Every shard is still opened, so the tensor is found: the index only names files.
    expect(maxAbsDiff(await prefillLogits(dir, PROMPT), single)).toBe(0);
  });

  it.each(['../model.safetensors', 'sub/model-00001.safetensors', '/etc/passwd', '..', ''])(
    'a shard name that is not a plain file name (%j)',
    async (shard) => {
      const dir = await shardedFolder((m) => ({ weight_map: { ...m, 'model.norm.weight': shard } }));
      await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir), /not a plain file name/);
    },
  );

  it('a shard name that is not a string', async () => {
    const dir = await shardedFolder((m) => ({ weight_map: { ...m, 'model.norm.weight': 7 } }));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir), 'model.norm.weight');
  });

  it('an index that is not JSON', async () => {
    const dir = await shardedFolder(() => '{"weight_map": {');
    await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir));
  });

  it('an index without weight_map', async () => {
    const dir = await shardedFolder(() => ({ metadata: {} }));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir), 'weight_map');
  });

  it('an empty weight_map', async () => {
    const dir = await shardedFolder(() => ({ weight_map: {} }));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', index(dir), /weight_map is empty/);
  });

  it('an index that omits a shard the model needs: the missing tensor is named', async () => {
    const dir = await shardedFolder((m) => {
      for (const k of Object.keys(m)) if (m[k] === SHARDS[1]) delete m[k];
      return { weight_map: m };
    });
    await expectModelError(dir, 'E_MODEL_WEIGHTS', /tensor \S+ is missing/);
  });

  it('a tensor stored in both shards is named', async () => {
    const dir = await shardedFolder();
    const dup = parts[0]?.[0] as (typeof tensors)[number];
    await writeF32Tensors(join(dir, SHARDS[1] as string), [...(parts[1] as typeof tensors), dup]);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', dup.name, /twice/);
  });
});
