// `tandem make-model`: writes a Hugging Face model folder with random weights in the real
// shapes of a preset (for benchmarks and tests; nothing is downloaded).
import { mkdir, readdir, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { presetConfig, tensorSpecs, countParameters } from '../../shared/model-presets.js';
import type { ModelConfig } from '../../shared/model-config.js';
import { SafetensorsWriter, type TensorSpec } from '../../shared/safetensors.js';
import { WeightStream, weightInit, type Family } from '../../shared/weight-init.js';
import { MAKE_MODEL_USAGE, MakeModelError, parseMakeModelArgs, type MakeModelOptions } from './make-model-args.js';

export { presetConfig, tensorSpecs, countParameters } from '../../shared/model-presets.js';
export { MakeModelError, parseMakeModelArgs, type MakeModelOptions } from './make-model-args.js';

/** Elements generated per chunk (16 MiB of fp32). */
const CHUNK_ELEMENTS = 1 << 22;

export interface MakeModelResult {
  dir: string;
  config: ModelConfig;
  tensors: number;
  parameters: number;
  bytes: number;
  seconds: number;
}

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Runs `tandem make-model` with the arguments that follow `make-model`. Prints a summary
 * to stdout on success and returns 0; prints the error to stderr and returns 2 for a
 * usage error (MakeModelError), 1 for any other failure.
 */
export async function runMakeModel(argv: string[], io: CliIo = process): Promise<number> {
  try {
    const options = parseMakeModelArgs(argv);
    if (options === 'help') {
      io.stdout.write(`${MAKE_MODEL_USAGE}\n`);
      return 0;
    }
    const r = await makeModel(options);
    io.stdout.write(
      `wrote ${r.dir}: ${options.preset}, ${options.dtype}, ${r.tensors} tensors, ` +
        `${r.parameters.toLocaleString('en-US')} parameters, ${(r.bytes / 1e9).toFixed(2)} GB in ${r.seconds.toFixed(1)} s\n`,
    );
    return 0;
  } catch (err) {
    const usage = err instanceof MakeModelError;
    io.stderr.write(`tandem make-model: ${(err as Error).message}\n${usage ? 'run with --help for usage\n' : ''}`);
    return usage ? 2 : 1;
  }
}

/**
 * Writes `model.safetensors` then `config.json` into options.out, which must be absent
 * (it is created) or an empty directory. Throws MakeModelError when it is not, and the
 * underlying error (e.g. SafetensorsError 'io') if writing fails; on failure nothing it
 * wrote is left behind.
 */
export async function makeModel(options: MakeModelOptions): Promise<MakeModelResult> {
  const started = performance.now();
  let config: ModelConfig;
  try {
    config = presetConfig(options.preset, {
      dtype: options.dtype,
      ...(options.layers !== undefined && { layers: options.layers }),
      ...(options.vocabSize !== undefined && { vocabSize: options.vocabSize }),
    });
  } catch (err) {
    throw new MakeModelError((err as Error).message);
  }
  const specs = tensorSpecs(config);
  const family: Family = config.model_type === 'qwen3' ? 'qwen3' : 'qwen3_5';
  const created = await prepareOutDir(options.out);
  const weightsPath = join(options.out, 'model.safetensors');
  const configPath = join(options.out, 'config.json');
  try {
    const bytes = await writeWeights(weightsPath, specs, family, options);
    await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { flag: 'wx' });
    return {
      dir: options.out,
      config,
      tensors: specs.length,
      parameters: countParameters(specs),
      bytes,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (err) {
    await rm(weightsPath, { force: true });
    await rm(configPath, { force: true });
    if (created) await rmdir(options.out).catch(() => undefined);
    throw err;
  }
}

// Returns true when it created the directory.
async function prepareOutDir(out: string): Promise<boolean> {
  let isDir: boolean;
  try {
    isDir = (await stat(out)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(out, { recursive: true });
    return true;
  }
  if (!isDir) throw new MakeModelError(`--out ${out} exists and is not a directory`);
  const entries = await readdir(out);
  if (entries.length > 0) {
    const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', ...' : '');
    throw new MakeModelError(`--out ${out} is not empty (it holds ${shown}); give a new or empty directory`);
  }
  return false;
}

// Streams every tensor through the writer; generation of one chunk overlaps the write of
// the previous one (two buffer slots). Returns the file size.
async function writeWeights(
  path: string,
  specs: readonly TensorSpec[],
  family: Family,
  options: MakeModelOptions,
): Promise<number> {
  const metadata = {
    format: 'pt',
    generator: 'tandem make-model',
    preset: options.preset,
    seed: String(options.seed),
  };
  const writer = await SafetensorsWriter.create(path, specs, metadata);
  const slots = [0, 1].map(() => ({
    f32: new Float32Array(specs.some((s) => s.dtype === 'F32') ? CHUNK_ELEMENTS : 0),
    bf16: new Uint16Array(specs.some((s) => s.dtype === 'BF16') ? CHUNK_ELEMENTS : 0),
    pending: Promise.resolve() as Promise<void>,
  }));
  let turn = 0;
  try {
    for (const spec of specs) {
      const stream = new WeightStream(options.seed, spec.name, weightInit(spec.name, family));
      const total = spec.shape.reduce((a, b) => a * b, 1);
      for (let done = 0; done < total; done += CHUNK_ELEMENTS) {
        const count = Math.min(CHUNK_ELEMENTS, total - done);
        const slot = slots[turn++ % 2] as (typeof slots)[number];
        await slot.pending;
        let bytes: Float32Array | Uint16Array;
        if (spec.dtype === 'BF16') stream.fillBf16((bytes = slot.bf16.subarray(0, count)));
        else stream.fillF32((bytes = slot.f32.subarray(0, count)));
        slot.pending = writer.write(spec.name, bytes);
      }
    }
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  return writer.fileBytes;
}
