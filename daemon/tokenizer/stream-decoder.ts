// Incremental detokenization for streamed generation.
//
// Each push decodes a short window of recent ids and returns the text beyond what was
// already returned, holding back a trailing U+FFFD (the mark of a UTF-8 sequence whose
// remaining bytes are still to come). When the window decodes to complete text it slides
// forward, keeping its last id as context so that decoders whose output depends on the
// preceding token (leading-space handling) stay right. For byte-level BPE (Qwen) the
// concatenation of all pieces plus flush() equals decode() of all ids.

/** Decodes a list of ids to text (the tokenizer's decode, with fixed options). */
export type DecodeFn = (ids: number[]) => string;

const REPLACEMENT = 0xfffd;

export class StreamDecoder {
  private ids: number[] = [];
  private start = 0; // first id of the window
  private emitted = 0; // UTF-16 units of decode(window) already returned or held as context

  constructor(private readonly decode: DecodeFn) {}

  /**
   * Adds one id; returns the newly completed text (possibly ''). Never splits a character.
   * If the decode function throws (e.g. for an invalid id), the id is not kept.
   */
  push(id: number): string {
    this.ids.push(id);
    let text: string;
    try {
      text = this.decode(this.ids.slice(this.start));
    } catch (err) {
      this.ids.pop();
      throw err;
    }
    let end = text.length;
    while (end > this.emitted && text.charCodeAt(end - 1) === REPLACEMENT) end--;
    const piece = end > this.emitted ? text.slice(this.emitted, end) : '';
    if (end > this.emitted) this.emitted = end;
    if (end === text.length && this.ids.length - this.start > 1) {
      this.start = this.ids.length - 1;
      this.emitted = this.decode(this.ids.slice(this.start)).length;
      this.ids = this.ids.slice(this.start);
      this.start = 0;
    }
    return piece;
  }

  /**
   * Returns whatever is held back (an incomplete trailing sequence decodes to U+FFFD, as
   * decode() does) and resets the decoder for a new sequence.
   */
  flush(): string {
    const rest = this.ids.length > this.start ? this.decode(this.ids.slice(this.start)).slice(this.emitted) : '';
    this.ids = [];
    this.start = 0;
    this.emitted = 0;
    return rest;
  }
}
