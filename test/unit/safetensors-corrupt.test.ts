// Every way a safetensors file can be broken, made by editing copies of a fixture.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSafetensors, SafetensorsError, type SafetensorsErrorKind } from '../../shared/safetensors.js';

const REF = 'test/fixtures/qwen35-tiny/reference.safetensors';
const dir = mkdtempSync(join(tmpdir(), 'tandem-st-corrupt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const original = readFileSync(REF);
const headerLen = Number(original.readBigUInt64LE(0));
const header = JSON.parse(original.subarray(8, 8 + headerLen).toString('utf8')) as Record<string, any>;
const data = original.subarray(8 + headerLen);

let counter = 0;
function fileWith(bytes: Uint8Array): string {
  const p = join(dir, `case-${counter++}.safetensors`);
  writeFileSync(p, bytes);
  return p;
}

function withHeader(json: string, body: Uint8Array = data): string {
  const h = Buffer.from(json, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return fileWith(Buffer.concat([len, h, body]));
}

function editedHeader(edit: (h: Record<string, any>) => void): string {
  const h = structuredClone(header);
  edit(h);
  return withHeader(JSON.stringify(h));
}

function expectError(fn: () => unknown, kind: SafetensorsErrorKind, file: string, tensor?: string, text?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SafetensorsError);
  const e = caught as SafetensorsError;
  expect(e.kind).toBe(kind);
  expect(e.file).toBe(file);
  expect(e.message).toContain(file);
  if (tensor !== undefined) {
    expect(e.tensor).toBe(tensor);
    expect(e.message).toContain(`'${tensor}'`);
  }
  if (text !== undefined) expect(e.message).toMatch(text);
}

describe('truncated files', () => {
  it('shorter than the 8-byte length', () => {
    const p = fileWith(original.subarray(0, 5));
    expectError(() => readSafetensors(p), 'truncated', p, undefined, /5 bytes, shorter than the 8-byte header length/);
  });

  it('empty', () => {
    const p = fileWith(new Uint8Array(0));
    expectError(() => readSafetensors(p), 'truncated', p);
  });

  it('ends inside the header', () => {
    const p = fileWith(original.subarray(0, 8 + 100));
    expectError(() => readSafetensors(p), 'truncated', p, undefined, /header needs 1384 bytes but the file has only 108/);
  });

  it('ends inside the tensor data', () => {
    const p = fileWith(original.subarray(0, original.length - 1000));
    expectError(() => readSafetensors(p), 'truncated', p, undefined, /file is truncated.*tensor '.*' is incomplete/);
  });

  it('shrinks after its header was read', () => {
    const p = fileWith(original);
    const f = readSafetensors(p);
    truncateSync(p, original.length - 10);
    expectError(() => f.getFloat32('prefill_logits'), 'io', p, 'prefill_logits', /changed size/);
  });

  it('grows after its header was read', () => {
    const p = fileWith(original);
    const f = readSafetensors(p);
    appendFileSync(p, Buffer.alloc(3));
    expectError(() => f.getInt32('input_ids'), 'io', p, 'input_ids', /changed size/);
  });
});

describe('bad header length', () => {
  it('zero', () => {
    const b = Buffer.from(original);
    b.writeBigUInt64LE(0n, 0);
    const p = fileWith(b);
    expectError(() => readSafetensors(p), 'bad-header-length', p, undefined, /bad header length 0/);
  });

  it('absurdly large (not a safetensors file)', () => {
    const b = Buffer.from(original);
    b.writeBigUInt64LE(2n ** 62n, 0);
    const p = fileWith(b);
    expectError(() => readSafetensors(p), 'bad-header-length', p, undefined, /bad header length 4611686018427387904/);
  });

  it('text file', () => {
    const p = fileWith(Buffer.from('this is not a safetensors file at all\n'));
    expectError(() => readSafetensors(p), 'bad-header-length', p);
  });
});

describe('bad header JSON', () => {
  it('not JSON', () => {
    const p = withHeader('{"prefill_logits": {"dtype": "F32", oops');
    expectError(() => readSafetensors(p), 'bad-header', p, undefined, /not valid JSON/);
  });

  it('not an object', () => {
    const p = withHeader('[1, 2, 3]');
    expectError(() => readSafetensors(p), 'bad-header', p, undefined, /not an object/);
  });

  it('unknown dtype', () => {
    const p = editedHeader((h) => (h.input_ids.dtype = 'Q4'));
    expectError(() => readSafetensors(p), 'bad-header', p, 'input_ids', /unknown dtype "Q4"/);
  });

  it('shape not a list of integers', () => {
    const p = editedHeader((h) => (h.input_ids.shape = [100.5]));
    expectError(() => readSafetensors(p), 'bad-header', p, 'input_ids', /shape/);
  });

  it('data_offsets not a pair', () => {
    const p = editedHeader((h) => (h.input_ids.data_offsets = [1]));
    expectError(() => readSafetensors(p), 'bad-header', p, 'input_ids', /data_offsets/);
  });

  it('metadata value not a string', () => {
    const p = editedHeader((h) => (h.__metadata__.split = 37));
    expectError(() => readSafetensors(p), 'bad-header', p, undefined, /__metadata__\.split is not a string/);
  });
});

describe('offsets and sizes', () => {
  it('offsets past the end of the data section', () => {
    const p = editedHeader((h) => {
      const [b, e] = h.input_ids.data_offsets as [number, number];
      h.input_ids.data_offsets = [b + data.length, e + data.length];
    });
    expectError(() => readSafetensors(p), 'out-of-bounds', p, 'input_ids', new RegExp(`outside the ${data.length}-byte data section`));
  });

  it('offsets reversed', () => {
    const p = editedHeader((h) => {
      const [b, e] = h.input_ids.data_offsets as [number, number];
      h.input_ids.data_offsets = [e, b];
    });
    expectError(() => readSafetensors(p), 'out-of-bounds', p, 'input_ids', /end before they begin/);
  });

  it('two tensors overlapping', () => {
    const p = editedHeader((h) => {
      h.decode_tokens.data_offsets = h.input_ids.data_offsets;
      h.decode_tokens.shape = h.input_ids.shape;
    });
    expectError(() => readSafetensors(p), 'out-of-bounds', p, undefined, /overlap/);
  });

  it('shape disagreeing with the byte count', () => {
    const p = editedHeader((h) => (h.prefill_logits.shape = [100, 511]));
    expectError(
      () => readSafetensors(p),
      'size-mismatch',
      p,
      'prefill_logits',
      /shape \[100, 511\] of F32 needs 204400 bytes but data_offsets \[\d+, \d+\] hold 204800/,
    );
  });

  it('dtype disagreeing with the byte count', () => {
    const p = editedHeader((h) => (h.input_ids.dtype = 'I64'));
    expectError(() => readSafetensors(p), 'size-mismatch', p, 'input_ids');
  });
});

describe('I64 tensors', () => {
  function i64File(values: bigint[]): string {
    const body = Buffer.alloc(values.length * 8);
    values.forEach((v, i) => body.writeBigInt64LE(v, i * 8));
    return withHeader(JSON.stringify({ ids: { dtype: 'I64', shape: [values.length], data_offsets: [0, body.length] } }), body);
  }

  it('narrows to Int32Array when every value fits', () => {
    const p = i64File([0n, 1n, -1n, 2147483647n, -2147483648n, 151645n]);
    expect(Array.from(readSafetensors(p).getInt32('ids'))).toEqual([0, 1, -1, 2147483647, -2147483648, 151645]);
  });

  it('refuses a value outside the int32 range, naming its element', () => {
    const p = i64File([5n, 2147483648n]);
    expectError(() => readSafetensors(p).getInt32('ids'), 'bad-value', p, 'ids', /element 1 = 2147483648 does not fit in int32/);
  });
});
