// Corrupted state files: every one is rejected by importState with E_STATE_FILE (or
// E_STATE_MISMATCH for another model's state) naming the file, never a crash, never a
// leaked sequence, and the engine keeps working (the good file still imports).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeEngine } from '../../native/index.js';
import { PROMPT, addon, expectEngineError, expectEngineRejects, fixture, openEngine, tempDir } from './helpers/engine-helpers.js';
import { ALIGN, E, ENTRY_BYTES, H, HEADER_BYTES, entryAt, findEntry, reseal, resealTensor } from './helpers/state-file-bytes.js';

const tmp = tempDir('state-corrupt');
let engine: NativeEngine;
let goodPath: string;
let good: Buffer;
let nTensors: number;
let tableEnd: number;
let tensors: ReturnType<typeof addon.inspectStateFile>['tensors'];

beforeAll(async () => {
  engine = openEngine(fixture('qwen35-tiny'));
  const seq = engine.createSequence();
  await engine.prefill(seq, PROMPT);
  goodPath = join(tmp.dir, 'good.state');
  await engine.exportState(seq, goodPath);
  engine.freeSequence(seq);
  good = readFileSync(goodPath);
  nTensors = good.readUInt32LE(H.nTensors);
  tableEnd = HEADER_BYTES + ENTRY_BYTES * nTensors;
  tensors = addon.inspectStateFile(goodPath).tensors;
});
afterAll(() => {
  engine?.close();
  tmp.cleanup();
});

let n = 0;
function write(bytes: Uint8Array): string {
  const p = join(tmp.dir, `bad-${n++}.state`);
  writeFileSync(p, bytes);
  return p;
}

function patched(edit: (b: Buffer) => void): Buffer {
  const b = Buffer.from(good);
  edit(b);
  return b;
}

/** importState rejects with `code` naming the file; nothing leaks and the good file still imports. */
async function expectRejected(path: string, code: 'E_STATE_FILE' | 'E_STATE_MISMATCH', ...mentions: Array<string | RegExp>): Promise<void> {
  const before = engine.stats().sequences;
  await expectEngineRejects(() => engine.importState(path), code, path, ...mentions);
  expect(engine.stats().sequences).toBe(before);
  const seq = await engine.importState(goodPath);
  expect(engine.sequenceLength(seq)).toBe(PROMPT.length);
  engine.freeSequence(seq);
}

describe('the test twin of the native checksum', () => {
  it('re-sealing an untouched file changes nothing', () => {
    const b = Buffer.from(good);
    for (let i = 0; i < nTensors; i++) resealTensor(b, i);
    expect(reseal(b).equals(good)).toBe(true);
  });
});

describe('truncated files', () => {
  const cuts = (): number[] => [0, 1, 8, 64, 127, 128, 200, tableEnd - 1, tableEnd, 16384, 20000, Math.floor(good.length / 2), good.length - 1];
  it('at every cut point (0 bytes, inside the header, the table and the data)', async () => {
    for (const cut of cuts()) {
      const p = write(good.subarray(0, cut));
      await expectRejected(p, 'E_STATE_FILE', cut < 128 ? /truncated/ : /truncated or padded/);
      if (cut < 128) expectEngineError(() => addon.inspectStateFile(p), 'E_STATE_FILE', p);
    }
  });

  it('padded with extra bytes', async () => {
    await expectRejected(write(Buffer.concat([good, Buffer.alloc(100)])), 'E_STATE_FILE', /truncated or padded/);
  });
});

describe('header fields', () => {
  it('wrong magic', async () => {
    const p = write(patched((b) => b.write('NOTSTATE', 0, 'latin1')));
    await expectRejected(p, 'E_STATE_FILE', /bad magic/);
    expectEngineError(() => addon.inspectStateFile(p), 'E_STATE_FILE', p, /bad magic/);
  });

  it('a safetensors file is not a state file', async () => {
    await expectRejected(write(readFileSync(join(fixture('qwen35-tiny'), 'model.safetensors'))), 'E_STATE_FILE', /bad magic/);
  });

  it.each([0, 2, 0xffffffff])('wrong version %i', async (v) => {
    await expectRejected(write(patched((b) => b.writeUInt32LE(v, H.version))), 'E_STATE_FILE', `unsupported version ${v}`);
  });

  it('one flipped byte anywhere in the header', async () => {
    for (let off = 0; off < HEADER_BYTES; off += 4) {
      await expectRejected(write(patched((b) => (b[off] = (b[off] as number) ^ 0x5a))), 'E_STATE_FILE');
    }
  });

  it('one flipped byte in each field of each table entry (caught by the header checksum)', async () => {
    for (let i = 0; i < nTensors; i++) {
      for (const field of Object.values(E)) {
        const off = entryAt(i) + field;
        await expectRejected(write(patched((b) => (b[off] = (b[off] as number) ^ 0x01))), 'E_STATE_FILE', /checksum mismatch/);
      }
    }
  });

  it('one flipped byte in each tensor region is named by the tensor checksum', async () => {
    for (const t of tensors) {
      for (const at of [t.offset, t.offset + Math.floor(t.bytes / 2), t.offset + t.bytes - 1]) {
        const p = write(patched((b) => (b[at] = (b[at] as number) ^ 0x10)));
        await expectRejected(p, 'E_STATE_FILE', `checksum mismatch in tensor ${t.name}`);
        // The header and table are intact: inspection (which skips tensor checksums) still works.
        expect(addon.inspectStateFile(p).tensors).toEqual(tensors);
      }
    }
  });

  it('a flipped byte in the padding between tensors is harmless', async () => {
    const t = tensors[0] as (typeof tensors)[number];
    const seq = await engine.importState(write(patched((b) => (b[t.offset + t.bytes + 5] = 0xff))));
    expect(engine.sequenceLength(seq)).toBe(PROMPT.length);
    engine.freeSequence(seq);
  });
});

describe('patched fields with a re-sealed header checksum reach the specific check', () => {
  const sealed = (edit: (b: Buffer) => void): string => write(reseal(patched(edit)));
  const keys = (): number => findEntry(good, 'layers.3.keys');

  it('an absurd tensor count', async () => {
    const p = sealed((b) => b.writeUInt32LE(1_000_000, H.nTensors));
    await expectRejected(p, 'E_STATE_FILE', /absurd tensor count 1000000/);
    expectEngineError(() => addon.inspectStateFile(p), 'E_STATE_FILE', p, /absurd tensor count/);
  });

  it('a tensor count that disagrees with the header length', async () => {
    await expectRejected(sealed((b) => b.writeUInt32LE(nTensors - 1, H.nTensors)), 'E_STATE_FILE', /header length disagrees/);
  });

  it('an absurd token count', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(1n << 40n, H.nTokens)), 'E_STATE_FILE', /absurd token count/);
  });

  it('a token count beyond max_position_embeddings', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(5000n, H.nTokens)), 'E_STATE_FILE', /max_position_embeddings/);
  });

  it('a token count that disagrees with the tensors', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(BigInt(PROMPT.length + 1), H.nTokens)), 'E_STATE_FILE', /tokens has the wrong shape/);
  });

  it('an absurd dimension', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(1n << 40n, entryAt(keys()) + E.shape + 8)), 'E_STATE_FILE', /layers\.3\.keys has an absurd dimension/);
  });

  it('an absurd size from several large dimensions', async () => {
    await expectRejected(
      sealed((b) => {
        for (let d = 0; d < 3; d++) b.writeBigUInt64LE(1n << 30n, entryAt(keys()) + E.shape + 8 * d);
      }),
      'E_STATE_FILE',
      /layers\.3\.keys is absurdly large/,
    );
  });

  it('too many dimensions', async () => {
    await expectRejected(sealed((b) => b.writeUInt32LE(9, entryAt(keys()) + E.ndim)), 'E_STATE_FILE', /layers\.3\.keys has 9 dimensions/);
  });

  it('an unknown dtype', async () => {
    await expectRejected(sealed((b) => b.writeUInt32LE(77, entryAt(keys()) + E.dtype)), 'E_STATE_FILE', /unknown dtype 77/);
  });

  it('a byte count that disagrees with the shape', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(12n, entryAt(keys()) + E.bytes)), 'E_STATE_FILE', /size disagrees/);
  });

  it('a shape that disagrees with the model', async () => {
    // [2, T, 32] -> [4, T, 16]: same bytes, wrong shape.
    await expectRejected(
      sealed((b) => {
        b.writeBigUInt64LE(4n, entryAt(keys()) + E.shape);
        b.writeBigUInt64LE(16n, entryAt(keys()) + E.shape + 16);
      }),
      'E_STATE_FILE',
      /layers\.3\.keys has the wrong shape/,
    );
  });

  it('an offset that is not 16 KiB aligned', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(BigInt(tensors[1]!.offset + 4), entryAt(1) + E.offset)), 'E_STATE_FILE', /not 16 KiB aligned/);
  });

  it.each([1n, 1n << 40n])('an offset past the end of the file (+%i blocks)', async (blocks) => {
    const past = BigInt(Math.ceil(good.length / ALIGN) * ALIGN) + blocks * BigInt(ALIGN);
    await expectRejected(sealed((b) => b.writeBigUInt64LE(past, entryAt(1) + E.offset)), 'E_STATE_FILE', /layers\.0\.conv lies outside the file/);
  });

  it('a tensor that starts inside the file and runs past its end', async () => {
    const last = nTensors - 1;
    await expectRejected(
      sealed((b) => {
        b.writeBigUInt64LE(1n << 20n, entryAt(last) + E.shape + 8); // T = 2^20 rows
        b.writeBigUInt64LE(BigInt(2 * 2 ** 20 * 32 * 4), entryAt(last) + E.bytes);
      }),
      'E_STATE_FILE',
      /layers\.3\.values lies outside the file/,
    );
  });

  it('an offset inside the header', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(0n, entryAt(1) + E.offset)), 'E_STATE_FILE', /lies outside the file/);
  });

  it('overlapping tensors', async () => {
    await expectRejected(sealed((b) => b.writeBigUInt64LE(BigInt(tensors[1]!.offset), entryAt(2) + E.offset)), 'E_STATE_FILE', /overlap/);
  });

  it('a tensor named twice', async () => {
    await expectRejected(sealed((b) => b.copy(b, entryAt(2) + E.name, entryAt(1) + E.name, entryAt(1) + 64)), 'E_STATE_FILE', /appears twice/);
  });

  it('an empty tensor name', async () => {
    await expectRejected(sealed((b) => b.fill(0, entryAt(1), entryAt(1) + 64)), 'E_STATE_FILE', /bad name/);
  });

  it('a name without its terminating zero', async () => {
    await expectRejected(sealed((b) => b.fill(0x41, entryAt(1), entryAt(1) + 64)), 'E_STATE_FILE', /bad name/);
  });

  it('a tensor the model needs is missing', async () => {
    await expectRejected(sealed((b) => b.write('layers.0.xxxx', entryAt(findEntry(good, 'layers.0.conv')), 'latin1')), 'E_STATE_FILE', /layers\.0\.conv is missing/);
  });

  it('tokens stored as floats', async () => {
    await expectRejected(sealed((b) => b.writeUInt32LE(0, entryAt(findEntry(good, 'tokens')) + E.dtype)), 'E_STATE_FILE', /tokens must be i32/);
  });

  it('a recurrent state that is not f32', async () => {
    const i = findEntry(good, 'layers.0.recurrent');
    await expectRejected(
      sealed((b) => {
        b.writeUInt32LE(1, entryAt(i) + E.dtype); // bf16
        b.writeBigUInt64LE(BigInt(tensors[i]!.bytes / 2), entryAt(i) + E.bytes);
      }),
      'E_STATE_FILE',
      /layers\.0\.recurrent must be f32/,
    );
  });

  it('a token id outside the vocabulary (tensor checksum re-sealed too)', async () => {
    const i = findEntry(good, 'tokens');
    const p = write(
      reseal(
        resealTensor(
          patched((b) => b.writeInt32LE(99999, tensors[i]!.offset + 8)),
          i,
        ),
      ),
    );
    await expectRejected(p, 'E_STATE_FILE', /token 2 id 99999 is outside the vocabulary/);
  });

  it('another fingerprint is E_STATE_MISMATCH naming both fingerprints', async () => {
    const p = sealed((b) => b.writeBigUInt64LE(0x0123456789abcdefn, H.fingerprint));
    await expectRejected(p, 'E_STATE_MISMATCH', '0123456789abcdef', engine.info.fingerprint);
  });
});

describe('files that are not there or not files', () => {
  it('a nonexistent path', async () => {
    await expectRejected(join(tmp.dir, 'nope', 'missing.state'), 'E_STATE_FILE');
    expectEngineError(() => addon.inspectStateFile(join(tmp.dir, 'missing.state')), 'E_STATE_FILE', 'missing.state');
  });

  it('a directory', async () => {
    const d = join(tmp.dir, 'a-directory');
    mkdirSync(d);
    await expectRejected(d, 'E_STATE_FILE', /not a regular file/);
  });

  it('a path that is not a string', async () => {
    await expectEngineRejects(() => engine.importState(42 as unknown as string), 'E_INVALID_ARGUMENT', 'path');
  });
});

describe('another model', () => {
  it("qwen35-tiny's state imported into qwen35-tiny-tied is E_STATE_MISMATCH", async () => {
    const other = openEngine(fixture('qwen35-tiny-tied'));
    try {
      await expectEngineRejects(() => other.importState(goodPath), 'E_STATE_MISMATCH', goodPath, engine.info.fingerprint, other.info.fingerprint);
      expect(other.stats().sequences).toBe(0);
      // The other engine still works.
      const seq = other.createSequence();
      expect((await other.prefill(seq, PROMPT)).length).toBe(512);
    } finally {
      other.close();
    }
  });

  it('the same config with different weights (bf16 fixture) is E_STATE_MISMATCH', async () => {
    const other = openEngine(fixture('qwen35-tiny-bf16'));
    try {
      await expectEngineRejects(() => other.importState(goodPath), 'E_STATE_MISMATCH', goodPath);
    } finally {
      other.close();
    }
  });
});
