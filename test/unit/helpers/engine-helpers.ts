// Shared helpers for the native engine's failure-mode tests: temporary model folders made
// from the fixtures, assertions on coded EngineErrors, and a "the process still works" check.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { isEngineError, loadAddon, type EngineErrorCode, type NativeAddon, type NativeEngine } from '../../../native/index.js';
import { readSafetensors, writeSafetensors, type TensorData, type WritableDType } from '../../../shared/safetensors.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const fixture = (name: string): string => join(FIXTURES, name);

export const addon: NativeAddon = loadAddon();

/** Tiny models: one thread keeps parallel test files from oversubscribing the CPU. */
export function openEngine(dir: string): NativeEngine {
  return new addon.Engine(dir, { threads: 1 });
}

/** A fresh temporary directory and its cleanup. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `tandem-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Copies a fixture's config.json and model.safetensors (nothing else) into `dest`. */
export function copyModel(name: string, dest: string): void {
  copyFileSync(join(fixture(name), 'config.json'), join(dest, 'config.json'));
  copyFileSync(join(fixture(name), 'model.safetensors'), join(dest, 'model.safetensors'));
}

/** Every tensor of a safetensors file as fp32 (names, shapes and values). */
export function readAllF32(path: string): Array<{ name: string; shape: number[]; data: Float32Array }> {
  const f = readSafetensors(path);
  return f.tensors.map((t) => ({ name: t.name, shape: [...t.shape], data: f.getFloat32(t.name) }));
}

/** Writes tensors (fp32 data) stored as `dtype`. */
export async function writeF32Tensors(
  path: string,
  tensors: ReadonlyArray<{ name: string; shape: number[]; data: Float32Array }>,
  dtype: WritableDType = 'F32',
): Promise<void> {
  const out: TensorData[] = tensors.map((t) => ({ name: t.name, dtype, shape: t.shape, data: t.data }));
  await writeSafetensors(path, out);
}

function checkError(e: unknown, code: EngineErrorCode, mentions: ReadonlyArray<string | RegExp>): Error {
  if (!isEngineError(e)) throw new Error(`expected an EngineError ${code}, got ${String(e)}`);
  expect(e.code, e.message).toBe(code);
  expect(e.message.length).toBeGreaterThan(10);
  for (const m of mentions) {
    if (typeof m === 'string') expect(e.message).toContain(m);
    else expect(e.message).toMatch(m);
  }
  return e;
}

/** Asserts that `fn` throws synchronously an EngineError with `code` whose message contains every mention. */
export function expectEngineError(fn: () => unknown, code: EngineErrorCode, ...mentions: Array<string | RegExp>): Error {
  let caught: unknown;
  let threw = false;
  try {
    fn();
  } catch (e) {
    caught = e;
    threw = true;
  }
  expect(threw, `expected ${code}`).toBe(true);
  return checkError(caught, code, mentions);
}

/**
 * Asserts that `fn` fails (a synchronous throw or a rejected promise: the addon validates
 * some arguments before queueing the work) with an EngineError `code`.
 */
export async function expectEngineRejects(
  fn: () => unknown,
  code: EngineErrorCode,
  ...mentions: Array<string | RegExp>
): Promise<Error> {
  let caught: unknown;
  let threw = false;
  try {
    await fn();
  } catch (e) {
    caught = e;
    threw = true;
  }
  expect(threw, `expected ${code}`).toBe(true);
  return checkError(caught, code, mentions);
}

/** Asserts that `new Engine(dir)` fails with `code`, and that the process can still load and run a good model. */
export async function expectModelError(dir: string, code: EngineErrorCode, ...mentions: Array<string | RegExp>): Promise<Error> {
  const e = expectEngineError(() => openEngine(dir), code, ...mentions);
  await expectHealthy();
  return e;
}

const reference = readSafetensors(join(fixture('qwen35-tiny'), 'reference.safetensors'));
const refIds = reference.getInt32('input_ids').subarray(0, 5);
const refLogits = reference.getFloat32('prefill_logits').subarray(0, 5 * 512);

/** A good engine can still be created and computes the reference logits. */
export async function expectHealthy(): Promise<void> {
  const engine = openEngine(fixture('qwen35-tiny'));
  try {
    const seq = engine.createSequence();
    const logits = await engine.prefill(seq, refIds, { allLogits: true });
    expect(maxAbsDiff(logits, refLogits)).toBeLessThan(1e-3);
  } finally {
    engine.close();
  }
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

/** All-position logits of `tokens` through the model in `dir`. */
export async function prefillLogits(dir: string, tokens: Int32Array): Promise<Float32Array> {
  const engine = openEngine(dir);
  try {
    return await engine.prefill(engine.createSequence(), tokens, { allLogits: true });
  } finally {
    engine.close();
  }
}

export const PROMPT = Int32Array.from([3, 141, 59, 265, 358, 97, 93, 238, 46, 264, 338, 327]);
