import type { EngineKind } from '../../native/index.js';
import { UsageError } from '../../shared/cli-args.js';

const KINDS: readonly EngineKind[] = ['cpu', 'cuda'];

/** Validates an --engine value. Availability on this machine is the addon's to judge. */
export function parseEngineKind(text: string): EngineKind {
  if (!(KINDS as readonly string[]).includes(text)) {
    throw new UsageError(`unknown engine "${text}" (engines: ${KINDS.join(', ')})`);
  }
  return text as EngineKind;
}
