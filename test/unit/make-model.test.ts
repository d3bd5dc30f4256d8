import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MakeModelError, parseMakeModelArgs, runMakeModel } from '../../daemon/cli/make-model.js';
import { presetConfig, tensorSpecs } from '../../shared/model-presets.js';
import { readSafetensors, f32ToBf16 } from '../../shared/safetensors.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-make-model-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const fresh = (): string => join(root, `m${counter++}`);

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runMakeModel(argv, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  return { code, out, err };
}

const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('parseMakeModelArgs', () => {
  it('defaults and both flag forms', () => {
    expect(parseMakeModelArgs(['--preset', 'qwen3.5-2b', '--out', 'x'])).toEqual({
      preset: 'qwen3.5-2b',
      dtype: 'bf16',
      out: 'x',
      seed: 0,
      layers: undefined,
      vocabSize: undefined,
    });
    expect(
      parseMakeModelArgs(['--preset=qwen3-0.6b', '--out=d', '--dtype=f32', '--seed=9007199254740991', '--layers', '2', '--vocab-size=64']),
    ).toEqual({ preset: 'qwen3-0.6b', dtype: 'f32', out: 'd', seed: 9007199254740991, layers: 2, vocabSize: 64 });
    expect(parseMakeModelArgs(['--preset', 'x', '--help'])).toBe('help');
  });

  it.each([
    [['--preset', 'qwen9', '--out', 'd'], /unknown preset 'qwen9' \(known: qwen3\.5-0\.8b, qwen3\.5-2b, qwen3\.5-9b, qwen3-0\.6b\)/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--dtype', 'f16'], /unknown dtype 'f16' \(known: bf16, f32\)/],
    [['--preset', 'qwen3.5-2b'], /--out DIR is required/],
    [['--out', 'd'], /--preset is required/],
    [['--preset', 'qwen3.5-2b', '--out'], /--out needs a value/],
    [['--preset', '--out', 'd'], /--preset needs a value/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--fast'], /unknown option '--fast'/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', 'extra'], /unexpected argument 'extra'/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--seed', '-1'], /--seed needs a value|--seed needs a non-negative integer/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--seed', '1e3'], /--seed needs a non-negative integer, got '1e3'/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--seed', '9007199254740992'], /--seed must be an integer >= 0/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--layers', '0'], /--layers must be an integer >= 1, got '0'/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--vocab-size', 'big'], /--vocab-size needs a non-negative integer/],
    [['--preset', 'qwen3.5-2b', '--out', 'd', '--out', 'e'], /--out given more than once/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseMakeModelArgs(argv)).toThrow(MakeModelError);
    expect(() => parseMakeModelArgs(argv)).toThrow(message);
  });
});

describe('runMakeModel refusals', () => {
  it('prints usage errors and exits 2, creating nothing', async () => {
    const out = fresh();
    const r = await run(['--preset', 'qwen3.5-7b', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^tandem make-model: unknown preset 'qwen3\.5-7b'/);
    expect(r.out).toBe('');
    expect(existsSync(out)).toBe(false);
    expect((await run(['--preset', 'qwen3.5-0.8b'])).err).toMatch(/--out DIR is required/);
    expect((await run(['--preset', 'qwen3.5-0.8b', '--out', out, '--dtype', 'fp8'])).code).toBe(2);
  });

  it('refuses an --out that is a file', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const r = await run(['--preset', 'qwen3.5-0.8b', '--out', file, '--layers', '1', '--vocab-size', '8']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--out ${file} exists and is not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('refuses a non-empty --out directory and leaves it untouched', async () => {
    const dir = fresh();
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{}');
    const r = await run(['--preset', 'qwen3.5-0.8b', '--out', dir, '--layers', '1', '--vocab-size', '8']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--out ${dir} is not empty (it holds config.json)`);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('prints help and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--layers N\s+for quick tests only/);
  });
});

describe('a real write: --preset qwen3.5-0.8b --layers 4 --vocab-size 1024', () => {
  const out = fresh();
  const argv = ['--preset', 'qwen3.5-0.8b', '--layers', '4', '--vocab-size', '1024', '--out', out, '--seed', '7'];

  it('writes config.json and model.safetensors that read back as the preset says', async () => {
    const r = await run(argv);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^wrote .*: qwen3\.5-0\.8b, bf16, 55 tensors, 84,068,320 parameters, 0\.17 GB in /);
    expect(readdirSync(out).sort()).toEqual(['config.json', 'model.safetensors']);

    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config).toEqual(presetConfig('qwen3.5-0.8b', { layers: 4, vocabSize: 1024 }));

    const file = readSafetensors(join(out, 'model.safetensors'));
    expect(file.metadata).toMatchObject({ format: 'pt', preset: 'qwen3.5-0.8b', seed: '7' });
    const specs = tensorSpecs(config);
    expect(file.tensors.map((t) => [t.name, t.dtype, t.shape])).toEqual(specs.map((s) => [s.name, s.dtype, s.shape]));
    expect(file.info('model.language_model.embed_tokens.weight').shape).toEqual([1024, 1024]);
    expect(file.info('model.language_model.layers.0.linear_attn.in_proj_qkv.weight').shape).toEqual([6144, 1024]);
    expect(file.info('model.language_model.layers.3.self_attn.q_proj.weight').shape).toEqual([4096, 1024]);
    expect(file.has('lm_head.weight')).toBe(false);

    const a = 0.02 * Math.sqrt(3) * (1 + 2 ** -8); // bf16 rounding may step just past the bound
    for (const t of file.tensors) {
      const v = file.getFloat32(t.name);
      const n = t.name;
      let min = Infinity, max = -Infinity, sum = 0, sq = 0;
      for (const x of v) {
        min = Math.min(min, x);
        max = Math.max(max, x);
        sum += x;
        sq += x * x;
      }
      const mean = sum / v.length;
      const std = Math.sqrt(sq / v.length - mean * mean);
      if (/(input_layernorm|post_attention_layernorm|q_norm|k_norm)\.weight$|language_model\.norm\.weight$/.test(n)) {
        expect([min, max], n).toEqual([0, 0]);
      } else if (n.endsWith('linear_attn.norm.weight') || n.endsWith('dt_bias')) {
        expect([min, max], n).toEqual([1, 1]);
      } else if (n.endsWith('A_log')) {
        expect(min, n).toBeGreaterThanOrEqual(0);
        expect(max, n).toBeLessThanOrEqual(Math.log(16) * (1 + 2 ** -8));
      } else if (n.endsWith('conv1d.weight')) {
        expect(Math.max(-min, max), n).toBeLessThanOrEqual(0.2 * Math.sqrt(3) * (1 + 2 ** -8));
        expect(Math.abs(std - 0.2), n).toBeLessThan(6 * 0.2 * Math.sqrt(0.2 / v.length));
      } else {
        expect(Math.max(-min, max), n).toBeLessThanOrEqual(a);
        // Six standard errors of the sample mean and of the sample std of a uniform law.
        expect(Math.abs(mean), n).toBeLessThan((6 * 0.02) / Math.sqrt(v.length));
        expect(Math.abs(std - 0.02), n).toBeLessThan(6 * 0.02 * Math.sqrt(0.2 / v.length));
      }
    }
  });

  it('is reproducible for a seed and differs across seeds', async () => {
    const again = fresh();
    expect((await run(argv.map((x) => (x === out ? again : x)))).code).toBe(0);
    expect(sha(join(again, 'model.safetensors'))).toBe(sha(join(out, 'model.safetensors')));
    const other = fresh();
    expect((await run(argv.map((x) => (x === out ? other : x === '7' ? '8' : x)))).code).toBe(0);
    expect(sha(join(other, 'model.safetensors'))).not.toBe(sha(join(out, 'model.safetensors')));
  });
});

describe('qwen3-0.6b writes', () => {
  it('accepts an existing empty directory; norms are 1; bf16 weights are the f32 weights rounded', async () => {
    const f32Dir = fresh();
    mkdirSync(f32Dir);
    const bf16Dir = fresh();
    const common = ['--preset', 'qwen3-0.6b', '--layers', '1', '--vocab-size', '64', '--seed', '3'];
    expect((await run([...common, '--dtype', 'f32', '--out', f32Dir])).code).toBe(0);
    expect((await run([...common, '--out', bf16Dir])).code).toBe(0);
    const f32 = readSafetensors(join(f32Dir, 'model.safetensors'));
    const bf16 = readSafetensors(join(bf16Dir, 'model.safetensors'));
    expect(f32.tensors.map((t) => t.name)).toEqual(bf16.tensors.map((t) => t.name));
    expect(Array.from(f32.getFloat32('model.layers.0.self_attn.q_norm.weight'))).toEqual(new Array(128).fill(1));
    expect(Array.from(f32.getFloat32('model.norm.weight'))).toEqual(new Array(1024).fill(1));
    for (const t of f32.tensors) {
      expect(t.dtype).toBe('F32');
      expect(bf16.info(t.name).dtype).toBe('BF16');
      const wide = f32.getFloat32(t.name);
      const bits = new Uint16Array(wide.length);
      f32ToBf16(wide, bits);
      expect(Buffer.from(bf16.readBytes(t.name)).equals(Buffer.from(bits.buffer))).toBe(true);
    }
    const cfg = JSON.parse(readFileSync(join(bf16Dir, 'config.json'), 'utf8'));
    expect(cfg).toMatchObject({ model_type: 'qwen3', num_hidden_layers: 1, vocab_size: 64, dtype: 'bfloat16', eos_token_id: 63 });
  });
});
