// Bad model folders, weights side: a missing, truncated or malformed model.safetensors, a
// missing or mis-shaped tensor. Every failure is E_MODEL_WEIGHTS naming the file or tensor,
// and a good engine still loads and runs afterwards.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { expectModelError, fixture, readAllF32, tempDir, writeF32Tensors } from './helpers/engine-helpers.js';

const tmp = tempDir('weight-errors');
afterAll(tmp.cleanup);

const SRC = join(fixture('qwen35-tiny'), 'model.safetensors');
const original = readFileSync(SRC);
const headerLen = Number(original.readBigUInt64LE(0));
const header = JSON.parse(original.subarray(8, 8 + headerLen).toString('utf8')) as Record<string, any>;
const dataStart = 8 + headerLen;
const tensors = readAllF32(SRC);

let n = 0;
/** A model folder holding the fixture's config.json; returns the folder and its model.safetensors path. */
function folder(): { dir: string; weights: string } {
  const dir = join(tmp.dir, `m${n++}`);
  mkdirSync(dir);
  copyFileSync(join(fixture('qwen35-tiny'), 'config.json'), join(dir, 'config.json'));
  return { dir, weights: join(dir, 'model.safetensors') };
}

function withBytes(bytes: Uint8Array): { dir: string; weights: string } {
  const f = folder();
  writeFileSync(f.weights, bytes);
  return f;
}

/** The fixture's data under a rewritten header. */
function withHeaderText(json: string): { dir: string; weights: string } {
  const h = Buffer.from(json, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return withBytes(Buffer.concat([len, h, original.subarray(dataStart)]));
}

function withEditedHeader(edit: (h: Record<string, any>) => void): { dir: string; weights: string } {
  const h = structuredClone(header);
  edit(h);
  return withHeaderText(JSON.stringify(h));
}

async function withTensors(edit: (t: typeof tensors) => typeof tensors): Promise<{ dir: string; weights: string }> {
  const f = folder();
  await writeF32Tensors(f.weights, edit(tensors.slice()));
  return f;
}

// A tensor from the middle of the data section, for the "cut in the data" case.
const GATE = 'model.layers.0.mlp.gate_proj.weight';

describe('model.safetensors', () => {
  it('missing: names the folder and both accepted file names', async () => {
    const { dir } = folder();
    await expectModelError(dir, 'E_MODEL_WEIGHTS', dir, 'model.safetensors', 'model.safetensors.index.json');
  });

  it('a directory where the file should be', async () => {
    const { dir, weights } = folder();
    mkdirSync(weights);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', dir, 'model.safetensors');
  });

  it.each([0, 4, 7])('truncated to %i bytes (shorter than the length field)', async (cut) => {
    const { dir, weights } = withBytes(original.subarray(0, cut));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /truncated/);
  });

  it.each([16, Math.floor(headerLen / 2), headerLen + 7])('cut inside the header at byte %i', async (cut) => {
    const { dir, weights } = withBytes(original.subarray(0, cut));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, `header length ${headerLen}`, /exceeds the file/);
  });

  it.each([0.5, 0.9, 0.999])('cut in the middle of the data (at %f of it)', async (frac) => {
    const cut = dataStart + Math.floor((original.length - dataStart) * frac);
    const { dir, weights } = withBytes(original.subarray(0, cut));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /tensor \S+ lies outside the file/, /truncated file/);
  });

  it('a header length larger than the file', async () => {
    const bytes = Buffer.from(original);
    bytes.writeBigUInt64LE(BigInt(original.length));
    const { dir, weights } = withBytes(bytes);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /exceeds the file/);
  });

  it('an absurd header length (2^63)', async () => {
    const bytes = Buffer.from(original);
    bytes.writeBigUInt64LE(1n << 63n);
    const { dir, weights } = withBytes(bytes);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /exceeds the file/);
  });

  it('a header that is not JSON', async () => {
    const bytes = Buffer.from(original);
    bytes.fill('x'.charCodeAt(0), 8, 8 + 40);
    const { dir, weights } = withBytes(bytes);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /bad safetensors header/);
  });

  it('a header that is JSON but not an object', async () => {
    const { dir, weights } = withHeaderText('[' + ' '.repeat(10) + ']');
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /not a JSON object/);
  });

  it('a header nested too deeply', async () => {
    const { dir, weights } = withHeaderText('['.repeat(100000) + ']'.repeat(100000));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, /nested too deeply/);
  });

  it('a tensor with an unsupported dtype is named', async () => {
    const { dir, weights } = withEditedHeader((h) => (h[GATE].dtype = 'F64'));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /unsupported dtype F64/);
  });

  it('a tensor whose byte range disagrees with its shape is named', async () => {
    const { dir, weights } = withEditedHeader((h) => (h[GATE].shape = [128, 63]));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /holds \d+ bytes but its shape and dtype need \d+/);
  });

  it('a tensor whose offsets lie outside the data is named', async () => {
    const end = original.length - dataStart;
    const { dir, weights } = withEditedHeader((h) => (h[GATE].data_offsets = [end, end + 4 * 128 * 64]));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /lies outside the file/);
  });

  // Python's json writes NaN/Infinity and the native parser accepts them, so offsets must be
  // checked to be integers before they are used (NaN once became a size_t).
  it.each(['[NaN, NaN]', '[0, Infinity]', '["0", "32768"]', '[0.5, 32768.5]', '[-32768, 0]'])(
    'data_offsets %s are named as bad',
    async (offsets) => {
      const entry = JSON.stringify(header[GATE]);
      const bad = JSON.stringify({ ...header[GATE], data_offsets: 'X' }).replace('"X"', offsets);
      const { dir, weights } = withHeaderText(JSON.stringify(header).replace(entry, bad));
      await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /bad data_offsets/);
    },
  );

  it('a malformed header entry is named', async () => {
    const { dir, weights } = withEditedHeader((h) => delete h[GATE].data_offsets);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /malformed/);
  });

  it('a negative dimension is named', async () => {
    const { dir, weights } = withEditedHeader((h) => (h[GATE].shape = [-128, -64]));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /bad shape/);
  });

  it('a tensor listed twice is named', async () => {
    const entry = JSON.stringify(header[GATE]);
    const { dir, weights } = withHeaderText(JSON.stringify(header).replace(/}$/, `,"${GATE}":${entry}}`));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights, GATE, /twice/);
  });
});

describe('tensors the model needs', () => {
  it('a missing tensor is named', async () => {
    const name = 'model.layers.1.mlp.up_proj.weight';
    const { dir } = await withTensors((t) => t.filter((x) => x.name !== name));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', `tensor ${name} is missing`);
  });

  it('a missing embedding is named', async () => {
    const { dir } = await withTensors((t) => t.filter((x) => x.name !== 'model.embed_tokens.weight'));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', 'model.embed_tokens.weight', /missing/);
  });

  it('a mis-shaped tensor is named with both shapes', async () => {
    const { dir, weights } = await withTensors((t) => t.map((x) => (x.name === GATE ? { ...x, shape: [64, 128] } : x)));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', GATE, 'has shape [64, 128]', 'needs [128, 64]', weights);
  });

  it('a mis-shaped 1-d tensor (norm) is named with both shapes', async () => {
    const name = 'model.layers.3.self_attn.q_norm.weight';
    const { dir } = await withTensors((t) =>
      t.map((x) => (x.name === name ? { ...x, shape: [16], data: x.data.subarray(0, 16) } : x)),
    );
    await expectModelError(dir, 'E_MODEL_WEIGHTS', name, '[16]', '[32]');
  });

  it('an integer tensor where weights are expected is named', async () => {
    const { dir } = withEditedHeader((h) => (h[GATE].dtype = 'I32'));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', GATE, /integer dtype/);
  });

  it('tie_word_embeddings false without lm_head.weight', async () => {
    const { dir } = await withTensors((t) => t.filter((x) => x.name !== 'lm_head.weight'));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', 'lm_head.weight', 'tie_word_embeddings');
  });

  it('the file removed after a failed load does not matter to the next load', async () => {
    const { dir, weights } = withBytes(original.subarray(0, 100));
    await expectModelError(dir, 'E_MODEL_WEIGHTS', weights);
    rmSync(weights);
    await expectModelError(dir, 'E_MODEL_WEIGHTS', dir);
  });
});
