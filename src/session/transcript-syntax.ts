/**
 * What the transcript's writer and reader agree on: the marker, the header and segment lines, and
 * the format version. See transcript-codec.ts for the format.
 */
export const MARKER_PREFIX = '<!-- nf-msg ';
export const MARKER_SUFFIX = ' -->';
export const FORMAT_VERSION = 1;

/** A segment file a main transcript declares: its name (relative to the main file), size and digest. */
export interface SegmentRef {
  file: string;
  messages: number;
  sha256: string;
  line: number;
}
