// The whole contract of the native addon (native/build/Release/tandem_native.node).
// Every function here may throw an EngineError: a JS Error whose `code` is one of
// EngineErrorCode. Promise-returning methods run on a native thread, off the event loop;
// calls on one Engine are serialised by the addon (one owner per engine).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type EngineErrorCode =
  | 'E_MODEL_CONFIG' // config.json missing, unparsable, unknown architecture or bad values
  | 'E_MODEL_WEIGHTS' // safetensors missing, truncated, a tensor missing or mis-shaped
  | 'E_STATE_FILE' // state file unreadable, truncated, bad magic/version/checksum/bounds
  | 'E_STATE_MISMATCH' // state file made by another model (fingerprint differs)
  | 'E_INVALID_ARGUMENT' // a bad token id, sequence id, batch, sampling parameter
  | 'E_ENGINE_UNAVAILABLE' // the engine kind is not built in or has no device here
  | 'E_IO' // an OS call failed (open, mmap, rename, ...)
  | 'E_INTERNAL';

export interface EngineError extends Error {
  code: EngineErrorCode;
}

export type EngineKind = 'cpu' | 'cuda';
export type DType = 'f32' | 'bf16' | 'f16';

export interface EngineOptions {
  /** Which backend computes. Default 'cpu'. */
  engine?: EngineKind;
  /** Worker threads for the CPU backend (and BLAS). Default: hardware concurrency. */
  threads?: number;
  /** CUDA device ordinal (cuda engine only). Default 0. */
  device?: number;
}

export interface ModelInfo {
  architecture: 'qwen3_5' | 'qwen3';
  modelType: string;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  layerTypes: Array<'linear_attention' | 'full_attention'>;
  weightDtype: DType;
  /** 16 hex digits: hash of the architecture-relevant config and every weight's name, dtype and shape. */
  fingerprint: string;
  maxPositionEmbeddings: number;
  /** Number of parameters of the language model (tied embedding counted once). */
  parameterCount: number;
  /** Bytes of weights one decode step reads (all matrices incl. LM head, one embedding row). */
  decodeWeightBytes: number;
  /** Bytes of every weight tensor mapped. */
  weightBytes: number;
  eosTokenIds: number[];
  /** The LM head is the token embedding (no separate lm_head.weight). */
  tiedEmbeddings: boolean;
}

export interface SamplingParams {
  /** In [0, 100]; 0 means greedy argmax (a negative, NaN or infinite value is E_INVALID_ARGUMENT). */
  temperature: number;
  /** 0 means no top-k cut. */
  topK: number;
  /** 1 means no nucleus cut. Must be in (0, 1]. */
  topP: number;
  /** Any integer in [0, 2^53). Together with the position it keys the counter-based RNG. */
  seed: number;
}

export interface StateFileInfo {
  bytes: number;
  tokens: number;
}

export interface EngineStats {
  /** Bytes the engine holds beyond the mmap'd weights: per-sequence state plus scratch. */
  stateBytes: number;
  scratchBytes: number;
  sequences: number;
}

export interface NativeEngine {
  readonly info: ModelInfo;
  readonly kind: EngineKind;
  /** A new, empty sequence (position 0). Returns its id. */
  createSequence(): number;
  /** Frees a sequence; an unknown id is E_INVALID_ARGUMENT. */
  freeSequence(seq: number): void;
  /** Number of tokens the sequence has consumed. */
  sequenceLength(seq: number): number;
  /** Token ids the sequence has consumed, in order. */
  sequenceTokens(seq: number): Int32Array;
  /**
   * Prefills `tokens` on top of the sequence's state, in chunks of at most `chunkSize` tokens
   * (default 512). Returns the logits of every token ([n, V], row-major) when `allLogits`,
   * else of the last token only ([1, V]).
   */
  prefill(seq: number, tokens: Int32Array, options?: { allLogits?: boolean; chunkSize?: number }): Promise<Float32Array>;
  /** One decode step: sequence seqs[i] consumes tokens[i]. Returns logits [B, V]. */
  decode(seqs: Int32Array, tokens: Int32Array): Promise<Float32Array>;
  /**
   * Samples from row `row` of `logits` ([*, V]). Deterministic in (logits, params, position):
   * the RNG draw is keyed by (seed, position), position = index of the token being sampled.
   */
  sample(logits: Float32Array, row: number, params: SamplingParams, position: number): number;
  /** Writes the sequence's state to `path` (temporary name, then rename). */
  exportState(seq: number, path: string): Promise<StateFileInfo>;
  /** Validates the state file completely, then returns a new sequence holding that state. */
  importState(path: string): Promise<number>;
  stats(): EngineStats;
  /**
   * Frees every sequence and unmaps the weights; later calls (and reading `info`) fail with
   * E_INVALID_ARGUMENT, except stats(), which reports zeros, and close(), which does nothing.
   */
  close(): void;
}

export interface NativeAddon {
  Engine: new (modelDir: string, options?: EngineOptions) => NativeEngine;
  /** Engine kinds compiled into this addon and usable on this machine. */
  availableEngines(): EngineKind[];
  /** Reads a state file's header and tensor table (validated; tensors not checksummed). */
  inspectStateFile(path: string): {
    version: number;
    fingerprint: string;
    tokens: number;
    fileBytes: number;
    tensors: Array<{ name: string; dtype: string; shape: number[]; offset: number; bytes: number }>;
  };
  /** Measured memory read bandwidth in bytes/s over `bytes` of memory with `threads` threads. */
  measureReadBandwidth(bytes: number, threads: number): number;
  /** Measured BLAS sgemm rate in FLOP/s for square matrices of side n. */
  measureSgemm(n: number, threads: number): number;
  /** The BLAS library the CPU backend links (e.g. "OpenBLAS 0.3.21", "Accelerate"). */
  blasInfo(): string;
}

const here = dirname(fileURLToPath(import.meta.url));

function findAddon(): string {
  // Works from native/ (vitest on .ts) and from dist/native/ (compiled).
  const candidates = [
    join(here, 'build', 'Release', 'tandem_native.node'),
    join(here, '..', '..', 'native', 'build', 'Release', 'tandem_native.node'),
  ];
  for (const c of candidates) if (existsSync(c)) return c;
  throw Object.assign(new Error(`native addon not built: run "npm install" (looked in ${candidates.join(', ')})`), {
    code: 'E_ENGINE_UNAVAILABLE',
  });
}

let cached: NativeAddon | undefined;

/** Loads the addon once per process. Throws E_ENGINE_UNAVAILABLE when it is not built. */
export function loadAddon(): NativeAddon {
  if (!cached) cached = createRequire(import.meta.url)(findAddon()) as NativeAddon;
  return cached;
}

export function isEngineError(e: unknown): e is EngineError {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}
